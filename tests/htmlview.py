"""Read a figure's HTML in tests: every element with its attributes and its whole text (the standard
library's parser, no browser)."""
from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"br", "col", "img", "input", "hr", "meta", "link", "path", "line"}


@dataclass
class Node:
    tag: str
    attrs: dict
    text: str = ""
    children: list = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class _Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.nodes, self._open = [], []

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs})
        if self._open:
            self._open[-1].children.append(node)
        self.nodes.append(node)
        if tag not in VOID:
            self._open.append(node)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self._open.pop()

    def handle_endtag(self, tag):
        while self._open:
            if self._open.pop().tag == tag:
                break

    def handle_data(self, data):
        for node in self._open:                  # every open element's text includes its children's
            node.text += data


def elements(markup: str) -> list[Node]:
    tree = _Tree()
    tree.feed(markup)
    tree.close()
    return tree.nodes


def select(markup: str, **attrs) -> list[Node]:
    """Elements whose attributes include these (class_="x": has class x; data_link="2": data-link="2")."""
    def match(node: Node) -> bool:
        for key, want in attrs.items():
            if key == "class_":
                if want not in node.classes:
                    return False
            elif node.attrs.get(key.replace("_", "-")) != want:
                return False
        return True
    return [n for n in elements(markup) if match(n)]
