# The stream exercise's file is the recurrence exercise's delta_rule (the learner pastes theirs) and this
# class: tests/test_practice.py's solution("stream") puts the two together.


class Stream:
    def __init__(self):
        self.S = None

    def feed(self, q, k, v, g, beta):
        o, self.S = delta_rule(q, k, v, g, beta, self.S)  # noqa: F821 -- defined by the recurrence file before it
        return o
