"""Assistant messages as sanitized HTML, rendered here so that no page has to parse Markdown.

A message record keeps its ``content`` as written; the server adds ``html`` to the records
it sends of agents' and notifications' messages (history, sent message, live events).
The Markdown parser runs with raw HTML off — HTML typed in a message shows as text — and
its output goes through an allow-list sanitizer all the same, so the ``html`` a page
receives only ever holds the few formatting elements below, and links to http(s)/mailto.

Messages are read as chat text, not as documents: a line break is a line break (email
headers stay one a line), and a line that follows a list item or a quote without being
indented starts a paragraph of its own (the question closing a list is not its last item).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import nh3

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

RENDERED_ROLES = frozenset({"assistant", "notification", "system"})
MAX_RENDERED = 100_000  # longer messages are sent as text only

TAGS = frozenset(
    {
        "p",
        "br",
        "hr",
        "strong",
        "em",
        "del",
        "code",
        "pre",
        "blockquote",
        "ul",
        "ol",
        "li",
        "a",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
    }
)
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
URL_SCHEMES = frozenset({"http", "https", "mailto"})


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """The parser, made when the first message is rendered rather than when the server starts."""
    from markdown_it import MarkdownIt  # noqa: PLC0415

    parser = MarkdownIt(
        "commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": True}
    )
    return parser.enable(["table", "strikethrough"])


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r" {0,3}([-+*]|\d{1,9}[.)])([ \t]|$)")
_QUOTE = re.compile(r" {0,3}>")


def chat_blocks(text: str) -> str:
    """``text`` with a blank line before each unindented line that would otherwise continue
    the list item or the quote above it (CommonMark's "lazy continuation")."""
    lines = text.split("\n")
    out: list[str] = []
    fence = ""
    within = ""  # "list" or "quote": what the line above belongs to
    for line in lines:
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1).startswith(fence):
                fence = ""
            out.append(line)
            continue
        if opened:
            fence, within = opened.group(1)[:3], ""
            out.append(line)
            continue
        if not line.strip():
            within = ""
        elif _LIST_ITEM.match(line):
            within = "list"
        elif _QUOTE.match(line):
            within = "quote"
        elif within and not line[0].isspace():
            out.append("")  # a new paragraph, not the item's or the quote's next line
            within = ""
        out.append(line)
    return "\n".join(out)


@lru_cache(maxsize=2048)
def render(text: str) -> str:
    """``text`` (Markdown, read as chat text) as sanitized HTML."""
    return nh3.clean(
        _parser().render(chat_blocks(text)),
        tags=set(TAGS),
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer nofollow",
    ).strip()


def with_html(message: dict[str, Any]) -> dict[str, Any]:
    """A message record with its rendered ``html`` (a copy; user messages stay text)."""
    content = message.get("content")
    if (
        message.get("role") not in RENDERED_ROLES
        or not isinstance(content, str)
        or len(content) > MAX_RENDERED
    ):
        return dict(message)
    return {**message, "html": render(content)}
