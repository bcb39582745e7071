#!/usr/bin/env python3
"""Writes the man pages (mdoc) of the runtime's commands from their own argument parsers.

    scripts/man-pages.py --build-dir DIR --output DIR [COMMAND...]

Each command is asked for its interface (`COMMAND --experimental-dump-help`, the JSON that
swift-argument-parser's own generate-manual plugin reads), and one page per command is written:
NAME, SYNOPSIS (the subcommand word only where there are real subcommands), DESCRIPTION with
its options, a COMMANDS section with every subcommand's usage, options and text, and an EXIT
STATUS section that gives the codes each command documents (its "Exit status: ..." sentence,
as a list when it lists codes: agent-control's one table for every command), not a generic line. The date is the commit's (SOURCE_DATE_EPOCH when set), so a page is the
same on every build of one commit. Nothing but Python's standard library; no second build.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys

COMMANDS = ["agent-control", "validate-settings", "create-agent", "add-agent-module", "agent-bench"]
EXIT_SENTENCE = re.compile(r"Exit status\b")


def escape(text):
    """Text for an mdoc text line: backslashes, and a leading dot or quote, made literal."""
    text = text.replace("\\", "\\e")
    return "\\&" + text if text[:1] in (".", "'") else text


def quoted(text):
    """One argument of a macro line."""
    return '"' + text.replace("\\", "\\e").replace('"', "\\(dq") + '"'


def paragraphs(text):
    return [p.strip() for p in re.split(r"\n\s*\n|\n", text or "") if p.strip()]


def exit_status(text):
    """The sentence (up to the end of its paragraph's sentence) that documents exit codes."""
    for paragraph in paragraphs(text):
        match = EXIT_SENTENCE.search(paragraph)
        if not match:
            continue
        rest = paragraph[match.start():]
        # The sentence ends at a full stop followed by a space and a capital, or at the end;
        # "e.g." and the like inside it do not end it.
        end = re.search(r"(?<!e\.g)(?<!i\.e)\.(?=\s+[A-Z]|$)", rest)
        return rest[: end.end()] if end else rest
    return None


def visible(command):
    return [c for c in command.get("subcommands", []) if c.get("shouldDisplay", True) and c["commandName"] != "help"]


def flag(name):
    prefix = {"long": "-", "short": "", "longWithSingleDash": ""}[name["kind"]]
    return prefix + name["name"]


def usage(argument):
    """The argument in a synopsis: `Op Fl -input Ar input`, `Ar name`."""
    kind = argument["kind"]
    if kind == "positional":
        words = ["Ar", argument.get("valueName", "value")]
        if argument.get("isRepeating"):
            words.append("...")
    else:
        words = ["Fl", flag(argument["preferredName"])]
        if kind == "option":
            words += ["Ar", argument.get("valueName", "value")]
    return words if not argument.get("isOptional") else ["Op"] + words


def arguments(command):
    return [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]


def synopsis(path, command):
    lines = [".Nm " + " ".join(path)]
    lines += ["." + " ".join(usage(argument)) for argument in arguments(command)]
    if visible(command):
        lines.append(".Ar subcommand")
    return lines


def option_list(command):
    items = arguments(command)
    if not items:
        return []
    lines = [".Bl -tag -width 6n"]
    for argument in items:
        if argument["kind"] == "positional":
            head = "Ar " + argument.get("valueName", "value")
        else:
            parts = []
            for index, name in enumerate(argument.get("names", [])):
                parts += (["Fl", flag(name)] if index == 0 else [",", "Fl", flag(name)])
            if argument["kind"] == "option":
                parts += ["Ar", argument.get("valueName", "value")]
            head = " ".join(parts)
        lines.append(".It " + head)
        text = " ".join(paragraphs(argument.get("abstract", "")) + paragraphs(argument.get("discussion", "")))
        lines.append(escape(text) if text else "\\&")
    lines.append(".El")
    return lines


def text_block(command):
    lines = []
    for index, paragraph in enumerate(paragraphs(command.get("discussion", ""))):
        if index:
            lines.append(".Pp")
        lines.append(escape(paragraph))
    return lines


def walk(command, path):
    """Every subcommand below `command`, depth first, with its path of names."""
    for sub in visible(command):
        sub_path = path + [sub["commandName"]]
        yield sub_path, sub
        yield from walk(sub, sub_path)


def page(root, date):
    name = root["commandName"]
    lines = [".Dd " + date, ".Dt " + name.upper() + " 1", ".Os", ".Sh NAME", ".Nm " + name,
             ".Nd " + escape(root.get("abstract", "").rstrip("."))]
    lines += [".Sh SYNOPSIS"] + synopsis([name], root)
    lines += [".Sh DESCRIPTION"] + text_block(root)
    if arguments(root):
        lines += [".Pp"] + option_list(root)
    subcommands = list(walk(root, [name]))
    if subcommands:
        lines.append(".Sh COMMANDS")
        for path, command in subcommands:
            lines.append(".Ss " + quoted(" ".join(path[1:])))
            lines += synopsis(path, command) + [".Pp"]
            if command.get("abstract"):
                lines.append(escape(command["abstract"]))
            body = text_block(command)
            if body:
                lines += [".Pp"] + body
            if arguments(command):
                lines += [".Pp"] + option_list(command)
    lines += exit_section(root, subcommands)
    return "\n".join(lines) + "\n"


def exit_section(root, subcommands):
    name = root["commandName"]
    own = exit_status(root.get("discussion"))
    if own is None:
        raise SystemExit(f"man-pages.py: {name} documents no exit status: add an \"Exit status: ...\" sentence to its discussion")
    lines = [".Sh EXIT STATUS"] + status_list(own)
    documented = [(path, exit_status(command.get("discussion"))) for path, command in subcommands]
    documented = [(path, text) for path, text in documented if text]
    if documented:
        lines += [".Pp", "Commands that say more:", ".Bl -tag -width 6n"]
        for path, text in documented:
            lines += [".It Nm " + " ".join(path[1:]), escape(text)]
        lines.append(".El")
    return lines


def status_list(sentence):
    """A sentence "Exit status…: 0 meaning; 1 meaning; …." as a list of its codes, each with
    its meaning; any other sentence as it is."""
    head, colon, rest = sentence.partition(": ")
    items = re.split(r"; (?=\d+ )", rest.rstrip(".")) if colon else []
    if len(items) < 2 or not all(re.match(r"\d+ ", item) for item in items):
        return [escape(sentence)]
    lines = [escape(head + ":"), ".Bl -tag -width 4n"]
    for item in items:
        code, _, meaning = item.partition(" ")
        lines += [".It " + code, escape(meaning)]
    return lines + [".El"]


def commit_date():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        try:
            epoch = subprocess.run(["git", "log", "-1", "--format=%ct"], capture_output=True, text=True,
                                   cwd=os.path.dirname(os.path.abspath(__file__)), check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            epoch = ""
    moment = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else datetime.datetime.now(datetime.timezone.utc)
    return moment.strftime("%B %-d, %Y")


def main():
    parser = argparse.ArgumentParser(description="Write the commands' man pages from their argument parsers.")
    parser.add_argument("--build-dir", required=True, help="the folder of the built commands (e.g. .build/debug)")
    parser.add_argument("--output", required=True, help="where the NAME.1 pages go")
    parser.add_argument("commands", nargs="*", default=COMMANDS, help="the commands (default: all)")
    options = parser.parse_args()
    os.makedirs(options.output, exist_ok=True)
    date = commit_date()
    for command in options.commands:
        binary = os.path.join(options.build_dir, command)
        try:
            dump = subprocess.run([binary, "--experimental-dump-help"], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as error:
            sys.exit(f"man-pages.py: cannot ask {binary} for its interface: {error}")
        root = json.loads(dump)["command"]
        with open(os.path.join(options.output, command + ".1"), "w", encoding="utf-8") as out:
            out.write(page(root, date))
    print(f"man-pages.py: wrote {len(options.commands)} pages to {options.output}")


if __name__ == "__main__":
    main()
