"""Tests of check.py: the shipped template passes, and each kind of damage fails it.

    python3 -m unittest discover -s editors/jetbrains -p 'test_*.py'
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECK = HERE / "check.py"
VSCODE_GRAMMAR = HERE.parent / "vscode" / "syntaxes" / "gherkin.tmLanguage.json"


def run_check(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), str(folder), "--grammar", str(VSCODE_GRAMMAR)],
        capture_output=True,
        text=True,
        check=False,
    )


class CheckTest(unittest.TestCase):
    def setUp(self) -> None:
        self.temporary = tempfile.TemporaryDirectory()
        self.folder = Path(self.temporary.name) / "jetbrains"
        shutil.copytree(HERE, self.folder, ignore=shutil.ignore_patterns("__pycache__"))

    def tearDown(self) -> None:
        self.temporary.cleanup()

    def edit_template(self, edit) -> None:
        path = self.folder / "template.json"
        template = json.loads(path.read_text(encoding="utf-8"))
        edit(template)
        path.write_text(json.dumps(template), encoding="utf-8")

    def assert_fails(self, fragment: str) -> None:
        result = run_check(self.folder)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn(fragment, result.stderr)

    def test_the_shipped_template_passes(self) -> None:
        result = run_check(HERE)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_invalid_json(self) -> None:
        (self.folder / "template.json").write_text('{"name": "Saffron",', encoding="utf-8")
        self.assert_fails("template.json: not valid JSON")

    def test_missing_template(self) -> None:
        (self.folder / "template.json").unlink()
        self.assert_fails("template.json: missing")

    def test_wrong_command(self) -> None:
        self.edit_template(lambda t: t["programArgs"].update({"default": "saffron serve"}))
        self.assert_fails("must run `saffron lsp`")

    def test_linux_is_not_an_os_key(self) -> None:
        self.edit_template(lambda t: t["programArgs"].update({"linux": "saffron lsp"}))
        self.assert_fails('LSP4IJ calls Linux "unix"')

    def test_missing_default_command(self) -> None:
        self.edit_template(lambda t: t["programArgs"].pop("default"))
        self.assert_fails('needs a "default" command')

    def test_missing_mapping(self) -> None:
        self.edit_template(lambda t: t.update({"fileTypeMappings": t["fileTypeMappings"][:1]}))
        self.assert_fails("no mapping for *.saffron")

    def test_wrong_language_id(self) -> None:
        self.edit_template(lambda t: t["fileTypeMappings"][0].update({"languageId": "cucumber"}))
        self.assert_fails("must map to the language id 'gherkin'")

    def test_misspelt_key(self) -> None:
        self.edit_template(lambda t: t.update({"programArg": t["programArgs"]}))
        self.assert_fails("unknown key 'programArg'")

    def test_settings_must_be_an_object(self) -> None:
        (self.folder / "settings.json").write_text("[]", encoding="utf-8")
        self.assert_fails("settings.json: must be a JSON object")

    def test_grammar_drift(self) -> None:
        grammar = next((self.folder / "textmate").glob("*.tmbundle")) / "Syntaxes" / "gherkin.tmLanguage.json"
        grammar.write_text(grammar.read_text(encoding="utf-8").replace("source.gherkin", "source.other"), encoding="utf-8")
        self.assert_fails("differs from")

    def test_broken_info_plist(self) -> None:
        info = next((self.folder / "textmate").glob("*.tmbundle")) / "info.plist"
        info.write_text("<plist><dict><key>name</key>", encoding="utf-8")
        self.assert_fails("info.plist: not a valid property list")


if __name__ == "__main__":
    unittest.main()
