"""Imported last by the workers' fork server (workers.PRELOAD): every object the fork server made while
importing torch and the jobs' modules goes to the collector's permanent generation, so no collection in a
worker forked from it walks those objects and copies their pages (they stay shared by every worker).
Nothing else imports this module: freezing a process that goes on working would keep its garbage."""
import gc

gc.collect()
gc.freeze()
