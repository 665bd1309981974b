"""Assistant messages as sanitized HTML, rendered here so that no page has to parse Markdown.

A message record keeps its ``content`` as written; the server adds ``html`` to the records
it sends of agents' and notifications' messages (history, sent message, live events).
The Markdown parser runs with raw HTML off — HTML typed in a message shows as text — and
its output goes through an allow-list sanitizer all the same, so the ``html`` a page
receives only ever holds the few formatting elements below, and links to http(s)/mailto.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import nh3
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

_PARSER = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_PARSER.enable(["table", "strikethrough"])


@lru_cache(maxsize=2048)
def render(text: str) -> str:
    """``text`` (Markdown) as sanitized HTML."""
    return nh3.clean(
        _PARSER.render(text),
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
