"""The shipped demo models: synthetic bilingual tasks, their BPE tokenizer, the random-weight demo,
the training script of the trained demo and the evidence that its gates mean something.

    python -m gdn.qwen35.demo.make_random      # assets/models/qwen35-demo-random (random weights)
    python -m gdn.qwen35.demo.train --help     # assets/models/qwen35-demo-trained (trained on the tasks)

    tasks.py        the synthetic bilingual tasks, and the tokenizer built for them
    bpe.py          the byte-level BPE trainer of both demo tokenizers
    make_random.py  the random-weight demo (deterministic)
    train.py        training the trained demo on the tasks
    evidence.py     does the trained demo's gating mean something: numbers on a fixed batch
    stories.py      what the real-model page points at in a task prompt, and the interventions that show it
    hints.py        the facts behind the task prompts' hints, computed on the loaded model and prompt

Nothing outside this folder imports it except the real-model page (for the evidence numbers).
"""
