"""What the documents point at must exist: relative links and their `#anchors` (GitHub's heading slugs), the git
commits and tags they name, and the files that the build's comments name.

Used by `python docs/generate.py --check` (`make docs-check`); each function returns its problems as lines.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from collections.abc import Iterable
from pathlib import Path

FENCED = re.compile(r"^```.*?^```[^\n]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
# How the documents name git history: `git show REF:path`, `git checkout REF`, "commit `abc1234`", "tag `name`".
GIT_REFS = (
    re.compile(r"git (?:show|checkout|diff|log) (?!-)([\w./-]+?)(?::|[\s`]|$)", re.M),
    re.compile(r"\bcommit `?([0-9a-f]{7,40})\b"),
    re.compile(r"\btag `([^`\s]+)`"),
)
# A path in the repository named by a comment of the build files: a top folder, then a file with an extension.
NAMED_FILE = re.compile(
    r"\b((?:hf_models|benchmarks|recipes|tokenizer|tests|docs|dev|examples|configs)/[\w./-]*\w\.\w+)"
)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text as shown (links, code and emphasis marks removed), lower case,
    punctuation dropped except `-` and `_`, spaces turned into `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = re.sub(r"(\*+|`|(?<!\w)_+|_+(?!\w))", "", text).lower()
    kept = "".join(c for c in text if unicodedata.category(c)[0] in "LNM" or c in " -_")
    return kept.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading's slug (a repeated heading gets `-1`, `-2`, as GitHub numbers them) and every HTML anchor."""
    seen: dict[str, int] = {}
    found = set(HTML_ANCHOR.findall(markdown))
    for _, heading in HEADING.findall(FENCED.sub("", markdown)):
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def prose(markdown: str) -> str:
    """The text without its code: links in code blocks and inline code are not links."""
    return INLINE_CODE.sub("", FENCED.sub("", markdown))


def _name(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def broken_links(documents: Iterable[Path], root: Path) -> list[str]:
    problems = []
    for doc in documents:
        for target in LINK.findall(prose(doc.read_text(encoding="utf-8"))):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            destination = (doc.parent / path).resolve() if path else doc
            where = f"{_name(doc, root)}: ({target})"
            if not destination.exists():
                problems.append(f"{where}: {path} does not exist")
            elif anchor and destination.suffix == ".md":
                if anchor not in anchors(destination.read_text(encoding="utf-8")):
                    problems.append(f"{where}: no heading #{anchor} in {_name(destination, root)}")
    return problems


def missing_git_refs(documents: Iterable[Path], root: Path) -> list[str]:
    """Refs the documents name that this repository lacks; none checked outside a git checkout or in a shallow clone
    (whose history is cut: an older commit is missing there without being wrong)."""
    shallow = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True
    )
    if shallow.returncode or shallow.stdout.strip() != "false":
        return []
    problems = []
    for doc in documents:
        text = doc.read_text(encoding="utf-8")
        for ref in sorted({ref for pattern in GIT_REFS for ref in pattern.findall(text)}):
            verify = ["git", "-C", str(root), "rev-parse", "-q", "--verify", f"{ref}^{{commit}}"]
            if subprocess.run(verify, capture_output=True).returncode:
                problems.append(f"{_name(doc, root)}: git ref {ref!r} does not exist in this repository")
    return problems


def missing_named_files(files: Iterable[Path], root: Path) -> list[str]:
    """Files of the repository named in the comments of build files (pyproject.toml, Makefile) that are gone."""
    problems = []
    for path in files:
        comments = "\n".join(
            line.split("#", 1)[1] for line in path.read_text(encoding="utf-8").splitlines() if "#" in line
        )
        problems += [
            f"{_name(path, root)}: names {name}, which does not exist"
            for name in sorted(set(NAMED_FILE.findall(comments)))
            if not (root / name).exists()
        ]
    return problems
