#!/usr/bin/env python3
"""Checks the documentation's links: every relative link and `#anchor` in README.md,
CONTRIBUTING.md, bench/README.md, examples/clients/README.md and the book's chapters
(docs/src/**.md) must resolve, which mdBook does not check between chapters.

- A link's file (or folder) must exist, relative to the file that links to it.
- A link from a chapter must stay inside docs/src/: the built book holds nothing else, so
  such a link would be broken there (name the file in the text instead).
- An `#anchor` must be the id of a heading of the file it points into (or of the same file),
  as GitHub and mdBook make it: lowercase, spaces to `-`, punctuation dropped, `-1`, `-2` for
  repeats; or an `<a id="...">` written in that file.
- Every chapter in docs/src/ must be listed in docs/src/SUMMARY.md, or the book leaves it out.

Links to other sites (`https:`, `mailto:`) are not followed: the tests reach no network.
Standard library only. Exits 1 and lists each broken link as FILE:LINE; 0 when all resolve.

  scripts/check-doc-links.py [ROOT]     (default: the checkout this script is in)
"""

import os
import re
import sys

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) and ![alt](target); the target may be <wrapped> and followed by a "title".
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(\S+)")
HTML_ID = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
HREF = re.compile(r"<a\s+[^>]*href=\"([^\"]+)\"")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    book = os.path.join(root, "docs", "src")
    files = [os.path.join(root, name) for name in ("README.md", "CONTRIBUTING.md", "bench/README.md", "examples/clients/README.md")]
    chapters = []
    for folder, _, names in os.walk(book):
        chapters += [os.path.join(folder, name) for name in names if name.endswith(".md")]
    chapters.sort()
    files += chapters

    anchors = {}
    problems = []
    for path in files:
        if not os.path.isfile(path):
            problems.append(f"{os.path.relpath(path, root)}: missing")
            continue
        for line_number, target in links(path):
            problem = check(path, target, root, book, anchors)
            if problem:
                problems.append(f"{os.path.relpath(path, root)}:{line_number}: {target}: {problem}")

    summary = os.path.join(book, "SUMMARY.md")
    if os.path.isfile(summary):
        listed = {
            os.path.normpath(os.path.join(book, target.split("#")[0]))
            for _, target in links(summary)
            if not SCHEME.match(target)
        }
        for chapter in chapters:
            if chapter != summary and chapter not in listed:
                problems.append(f"{os.path.relpath(chapter, root)}: not listed in docs/src/SUMMARY.md")

    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"doc links: {len(files)} files, {len(problems)} problems")
    return 1 if problems else 0


def links(path):
    """(line number, target) of every link in the Markdown file, code left out."""
    found = []
    for number, line in prose_lines(path):
        text = CODE_SPAN.sub("", line)
        for match in INLINE.finditer(text):
            found.append((number, match.group(1).strip("<>")))
        match = DEFINITION.match(text)
        if match:
            found.append((number, match.group(1).strip("<>")))
        for match in HREF.finditer(text):
            found.append((number, match.group(1)))
    return found


def prose_lines(path):
    """(line number, line) of the lines outside fenced code blocks."""
    with open(path, encoding="utf-8") as file:
        fenced = None
        for number, line in enumerate(file, start=1):
            match = FENCE.match(line)
            if match:
                if fenced is None:
                    fenced = match.group(1)
                elif match.group(1) == fenced:
                    fenced = None
                continue
            if fenced is None:
                yield number, line.rstrip("\n")


def check(source, target, root, book, anchors):
    """What is wrong with `target` linked from `source`, or None."""
    if not target or SCHEME.match(target) or target.startswith("//"):
        return None
    path, _, fragment = target.partition("#")
    resolved = os.path.normpath(os.path.join(os.path.dirname(source), path)) if path else source
    if not os.path.exists(resolved):
        return "no such file"
    inside = lambda folder, path: os.path.commonpath([folder, path]) == folder
    if inside(book, source) and not inside(book, resolved):
        return "leaves docs/src/, so the built book cannot hold it"
    if fragment:
        if not resolved.endswith(".md") or not os.path.isfile(resolved):
            return "an anchor into a file that is not Markdown"
        if resolved not in anchors:
            anchors[resolved] = ids(resolved)
        if fragment not in anchors[resolved]:
            return f"no heading with the id {fragment!r} in {os.path.relpath(resolved, root)}"
    return None


def ids(path):
    """The ids of the file's headings, and of the anchors written in it as HTML."""
    found = set()
    seen = {}
    for _, line in prose_lines(path):
        for match in HTML_ID.finditer(line):
            found.add(match.group(1))
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def slug(heading):
    """A heading's id: its text without markup, lowercase, whitespace as `-`, and nothing but
    letters, digits, `-` and `_` kept."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "")
    out = []
    for character in text.lower():
        if character.isalnum() or character in "-_":
            out.append(character)
        elif character.isspace():
            out.append("-")
    return "".join(out)


if __name__ == "__main__":
    sys.exit(main())
