"""The MCP App's page is linked from ES modules in their plain form, and anything else is
refused when the page is built rather than guessed at."""

from __future__ import annotations

import pytest

from pawflow.mcp import app_page


def linked(monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> str:
    monkeypatch.setattr(app_page, "_read", lambda path: files[path])
    monkeypatch.setattr(app_page, "SUBSTITUTES", {"web/api.js": "app/api.js"})
    return app_page.link("app/main.js")


def test_modules_run_in_dependency_order_with_their_imports_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = linked(
        monkeypatch,
        {
            "app/main.js": 'import { shown as show } from "../web/blocks.js";\nshow();\n',
            "web/blocks.js": (
                'import * as api from "./api.js";\n'
                'import {\n  h,\n  clear,\n} from "./dom.js";\n'
                "export function shown() { return api.action(h, clear); }\n"
            ),
            "web/dom.js": "export const h = 1;\nexport async function clear() {}\n",
            "app/api.js": "export class ApiError extends Error {}\nexport function action() {}\n",
        },
    )
    order = [line.split("// ", 1)[1] for line in script.splitlines() if line.startswith("// ")]
    # The web chat's api.js is the app's own: blocks.js reads the substitute.
    assert order == ["app/api.js", "web/dom.js", "web/blocks.js", "app/main.js"]
    assert "const api = __pawflow_app_api;" in script
    assert "const { h, clear } = __pawflow_web_dom;" in script
    assert "const { shown: show } = __pawflow_web_blocks;" in script
    assert "get clear() { return clear; }" in script
    assert "export " not in script and "import " not in script


@pytest.mark.parametrize(
    ("source", "refusal"),
    [
        ("export default 1;\n", "'export'"),
        ("export let counter = 0;\n", "'export'"),
        ("const here = import.meta.url;\n", "'import.meta'"),
        ('import { x } from "pkg";\n', "only relative imports"),
        ('import { x } from "../../../elsewhere.js";\n', "leaves the package"),
        ('import { a, b c } from "./a.js";\n', "cannot link the import"),
        ('import { a } from "./main.js";\nexport const b = a;\n', "import each other"),
    ],
)
def test_forms_the_linker_does_not_take_are_refused(
    monkeypatch: pytest.MonkeyPatch, source: str, refusal: str
) -> None:
    files = {"app/main.js": source, "app/a.js": "export const a = 1;\n"}
    with pytest.raises(app_page._Unlinkable, match=refusal):
        linked(monkeypatch, files)


def test_the_page_holds_what_would_end_its_script_early_nowhere() -> None:
    with pytest.raises(app_page._Unlinkable, match="</script"):
        app_page._inline("const s = '</script>';", "script")
