#!/usr/bin/env python3
"""Structural check of the LSP4IJ template and the TextMate bundle in this folder.

    python3 editors/jetbrains/check.py [FOLDER] [--grammar PATH]

FOLDER is the template folder (default: the folder of this script). --grammar names the VS Code
grammar the bundle's copy must equal (default: ../vscode/syntaxes/gherkin.tmLanguage.json from
FOLDER). Prints every problem found and exits 1 when there is one, 0 otherwise. Standard library
only.

What LSP4IJ reads (its "Import from custom template" takes a folder): template.json (required:
"name", "programArgs" with a "default" command and optional "windows", "mac" and "unix" ones,
"fileTypeMappings" of {"fileType": {"patterns": [...]}, "languageId": ...}), settings.json and
initializationOptions.json (JSON objects), README.md (shown by the dialog's help button).
"""

from __future__ import annotations

import argparse
import json
import plistlib
import shlex
import sys
from pathlib import Path
from typing import Any

# The keys LSP4IJ's template deserializer knows; anything else is most likely a typo.
TEMPLATE_KEYS = {
    "id",
    "name",
    "programArgs",
    "fileTypeMappings",
    "languageMappings",
    "workingDir",
    "env",
    "expandConfiguration",
    "disablePromotionFor",
    "url",
    "dev",
}
# LSP4IJ picks programArgs[OS] for "windows", "mac" or "unix", else programArgs["default"].
PROGRAM_ARGS_KEYS = {"default", "windows", "mac", "unix"}
REQUIRED_MAPPINGS = {"*.feature": "gherkin", "*.saffron": "saffron"}
BUNDLE_FILE_TYPES = {"feature", "saffron"}


class Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def problem(self, message: str) -> None:
        self.problems.append(message)

    def read_json(self, path: Path, label: str) -> Any:
        if not path.is_file():
            self.problem(f"{label}: missing")
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            self.problem(f"{label}: not valid JSON ({error})")
            return None

    def read_plist(self, path: Path, label: str) -> Any:
        if not path.is_file():
            self.problem(f"{label}: missing")
            return None
        try:
            with path.open("rb") as handle:
                return plistlib.load(handle)
        except Exception as error:  # plistlib raises several unrelated types
            self.problem(f"{label}: not a valid property list ({error})")
            return None

    # -- template.json ---------------------------------------------------------------------

    def check_template(self, folder: Path) -> None:
        template = self.read_json(folder / "template.json", "template.json")
        if template is None:
            return
        if not isinstance(template, dict):
            self.problem("template.json: must be a JSON object")
            return
        for key in sorted(set(template) - TEMPLATE_KEYS):
            self.problem(f"template.json: unknown key {key!r} (LSP4IJ ignores it; a typo?)")
        if template.get("name") != "Saffron":
            self.problem(f"template.json: \"name\" must be \"Saffron\", not {template.get('name')!r}")
        if "id" in template and not (isinstance(template["id"], str) and template["id"]):
            self.problem("template.json: \"id\" must be a non-empty string")
        self.check_program_args(template.get("programArgs"))
        self.check_mappings(template.get("fileTypeMappings"))

    def check_program_args(self, program_args: Any) -> None:
        if not isinstance(program_args, dict):
            self.problem("template.json: \"programArgs\" must be an object of commands per OS")
            return
        if "default" not in program_args:
            self.problem("template.json: \"programArgs\" needs a \"default\" command")
        for key in sorted(set(program_args) - PROGRAM_ARGS_KEYS):
            hint = ' (LSP4IJ calls Linux "unix")' if key == "linux" else ""
            self.problem(f"template.json: programArgs key {key!r} is not one of {sorted(PROGRAM_ARGS_KEYS)}{hint}")
        for key in ("windows", "mac", "unix"):
            if key not in program_args:
                self.problem(f"template.json: programArgs has no {key!r} command")
        for key, command in program_args.items():
            if not isinstance(command, str) or not command.strip():
                self.problem(f"template.json: programArgs[{key!r}] must be a command line")
                continue
            try:
                words = shlex.split(command, posix=(key != "windows"))
            except ValueError as error:
                self.problem(f"template.json: programArgs[{key!r}] does not parse ({error})")
                continue
            program = Path(words[0].replace("\\", "/")).name.lower()
            if program not in ("saffron", "saffron.exe"):
                self.problem(f"template.json: programArgs[{key!r}] must start the saffron binary, not {words[0]!r}")
            if words[1:] != ["lsp"]:
                self.problem(f"template.json: programArgs[{key!r}] must run `saffron lsp`, not {command!r}")

    def check_mappings(self, mappings: Any) -> None:
        if not isinstance(mappings, list) or not mappings:
            self.problem("template.json: \"fileTypeMappings\" must be a non-empty array")
            return
        seen: dict[str, str] = {}
        for index, mapping in enumerate(mappings):
            where = f"template.json: fileTypeMappings[{index}]"
            if not isinstance(mapping, dict):
                self.problem(f"{where} must be an object")
                continue
            language_id = mapping.get("languageId")
            if not isinstance(language_id, str) or not language_id:
                self.problem(f"{where} has no \"languageId\"")
                continue
            file_type = mapping.get("fileType")
            if not isinstance(file_type, dict):
                self.problem(f"{where} has no \"fileType\" object")
                continue
            patterns = file_type.get("patterns")
            if patterns is None and "name" not in file_type:
                self.problem(f"{where}: \"fileType\" needs \"patterns\" or a \"name\"")
            if patterns is not None:
                if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) and p for p in patterns):
                    self.problem(f"{where}: \"patterns\" must be a non-empty array of file name patterns")
                    continue
                for pattern in patterns:
                    if pattern in seen and seen[pattern] != language_id:
                        self.problem(f"{where}: {pattern} is mapped to both {seen[pattern]!r} and {language_id!r}")
                    seen[pattern] = language_id
        for pattern, language_id in REQUIRED_MAPPINGS.items():
            if pattern not in seen:
                self.problem(f"template.json: no mapping for {pattern}")
            elif seen[pattern] != language_id:
                self.problem(f"template.json: {pattern} must map to the language id {language_id!r}, not {seen[pattern]!r}")

    # -- the other template files ----------------------------------------------------------

    def check_companions(self, folder: Path) -> None:
        for name in ("settings.json", "initializationOptions.json"):
            value = self.read_json(folder / name, name)
            if value is not None and not isinstance(value, dict):
                self.problem(f"{name}: must be a JSON object")
        readme = folder / "README.md"
        if not readme.is_file():
            self.problem("README.md: missing (LSP4IJ shows it from the template dialog)")
        elif "Import from custom template" not in readme.read_text(encoding="utf-8"):
            self.problem("README.md: does not explain \"Import from custom template\"")

    # -- the TextMate bundle ---------------------------------------------------------------

    def check_bundle(self, folder: Path, vscode_grammar: Path) -> None:
        bundles = sorted((folder / "textmate").glob("*.tmbundle"))
        if not bundles:
            self.problem("textmate/: no *.tmbundle folder (IntelliJ recognises a TextMate bundle by that name)")
            return
        for bundle in bundles:
            label = f"textmate/{bundle.name}"
            info = self.read_plist(bundle / "info.plist", f"{label}/info.plist")
            uuids: set[str] = set()
            if isinstance(info, dict):
                for key in ("name", "uuid"):
                    if not isinstance(info.get(key), str) or not info[key]:
                        self.problem(f"{label}/info.plist: no {key!r}")
            elif info is not None:
                self.problem(f"{label}/info.plist: must be a dictionary")
            grammars = sorted((bundle / "Syntaxes").glob("*.tmLanguage.json"))
            if not grammars:
                self.problem(f"{label}/Syntaxes: no *.tmLanguage.json grammar")
            for grammar_path in grammars:
                grammar_label = f"{label}/Syntaxes/{grammar_path.name}"
                grammar = self.read_json(grammar_path, grammar_label)
                if not isinstance(grammar, dict):
                    continue
                if not isinstance(grammar.get("scopeName"), str):
                    self.problem(f"{grammar_label}: no \"scopeName\"")
                missing = BUNDLE_FILE_TYPES - set(grammar.get("fileTypes") or [])
                if missing:
                    self.problem(f"{grammar_label}: \"fileTypes\" lacks {sorted(missing)} (IntelliJ maps files by it)")
                if isinstance(grammar.get("uuid"), str):
                    uuids.add(grammar["uuid"])
                self.check_same_grammar(grammar_path, grammar_label, vscode_grammar)
            for preferences_path in sorted((bundle / "Preferences").glob("*.tmPreferences")):
                preferences = self.read_plist(preferences_path, f"{label}/Preferences/{preferences_path.name}")
                if isinstance(preferences, dict):
                    if not isinstance(preferences.get("scope"), str) or not isinstance(preferences.get("settings"), dict):
                        self.problem(f"{label}/Preferences/{preferences_path.name}: needs \"scope\" and \"settings\"")
                    if isinstance(preferences.get("uuid"), str):
                        uuids.add(preferences["uuid"])
            if isinstance(info, dict):
                for uuid in info.get("ordering") or []:
                    if uuid not in uuids:
                        self.problem(f"{label}/info.plist: ordering names {uuid}, which no file of the bundle has")

    def check_same_grammar(self, bundle_grammar: Path, label: str, vscode_grammar: Path) -> None:
        if bundle_grammar.name != vscode_grammar.name:
            return
        if not vscode_grammar.is_file():
            self.problem(f"{label}: cannot compare with the VS Code grammar, {vscode_grammar} is missing")
            return
        if bundle_grammar.read_bytes() != vscode_grammar.read_bytes():
            self.problem(
                f"{label}: differs from {vscode_grammar}; copy it again:\n"
                f"    cp editors/vscode/syntaxes/{vscode_grammar.name} editors/jetbrains/{label}"
            )


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=here)
    parser.add_argument("--grammar", type=Path, default=None)
    arguments = parser.parse_args(argv)
    folder = arguments.folder.resolve()
    vscode_grammar = arguments.grammar or (folder / ".." / "vscode" / "syntaxes" / "gherkin.tmLanguage.json")

    checker = Checker()
    checker.check_template(folder)
    checker.check_companions(folder)
    checker.check_bundle(folder, vscode_grammar.resolve())
    if checker.problems:
        for message in checker.problems:
            print(f"✗ {message}", file=sys.stderr)
        print(f"check.py: {len(checker.problems)} problem(s) in {folder}", file=sys.stderr)
        return 1
    print(f"check.py: the LSP4IJ template and the TextMate bundle in {folder} are well-formed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
