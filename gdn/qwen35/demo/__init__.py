"""The shipped demo models: synthetic bilingual tasks, their BPE tokenizer, the random-weight demo,
the training script of the trained demo and the evidence that its gates mean something.

    python -m gdn.qwen35.demo.make_random      # assets/models/qwen35-demo-random (random weights)
    python -m gdn.qwen35.demo.train --help     # assets/models/qwen35-demo-trained (trained on the tasks)

Nothing outside this folder imports it except the real-model page (for the evidence numbers).
"""
