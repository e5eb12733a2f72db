#!/usr/bin/env python3
"""Extract the register databases from the hardware documents.

    extract.py [FAMILY ...]            write hal/regdb/<family>.toml (and, for the families with a
                                       packet table, hal/regdb/packets/<family>.toml)
    extract.py --check [FAMILY ...]    exit 1 if a committed file differs from a fresh extraction

The documents are read from ../shared/docs (beside the repository), or from $GPU_DOCS_DIR.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))

import packets  # noqa: E402
import pushbuffer  # noqa: E402
import regdb  # noqa: E402

FAMILIES = ["r5xx", "vc4", "evergreen", "nvidia"]


def docs_dir() -> Path:
    return Path(os.environ.get("GPU_DOCS_DIR") or regdb.DOCS_DIR)


def build(family: str) -> list[tuple[Path, str]]:
    """Every file extracted for `family`: its register database, and its packet table when
    the family has one."""
    module = importlib.import_module(family)
    docs = docs_dir()
    corrections = regdb.load_corrections(family)
    raw = (docs / module.DOCUMENT).read_text(encoding="utf-8")
    text = regdb.apply_text_corrections(raw, corrections)
    db = module.extract(text)
    regdb.apply_register_corrections(db, corrections)
    files = [(regdb.REGDB_DIR / f"{family}.toml", regdb.to_toml(db))]
    if family in packets.FAMILIES:
        files.append((packets.PACKETS_DIR / f"{family}.toml", packets.build(family, raw)))
    if family == "nvidia":
        files.append((packets.PACKETS_DIR / "nvidia.toml", pushbuffer.build(raw)))
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("families", nargs="*", default=FAMILIES)
    args = parser.parse_args()

    if not docs_dir().is_dir():
        print(f"hardware documents not found at {docs_dir()}; set GPU_DOCS_DIR", file=sys.stderr)
        return 2
    stale = []
    for family in args.families:
        if family not in FAMILIES:
            print(f"unknown family {family!r}; known: {', '.join(FAMILIES)}", file=sys.stderr)
            return 2
        try:
            files = build(family)
        except regdb.ExtractError as e:
            print(f"{family}: extraction failed: {e}", file=sys.stderr)
            return 1
        for out, fresh in files:
            rel = out.relative_to(regdb.REPO_ROOT)
            if args.check:
                if not out.exists() or out.read_text(encoding="utf-8") != fresh:
                    stale.append(family)
                    print(f"{family}: {rel} is stale; run python3 hal/regdb/extract/extract.py {family}")
                else:
                    print(f"{family}: {rel} up to date")
            else:
                out.parent.mkdir(exist_ok=True)
                out.write_text(fresh, encoding="utf-8")
                print(f"{family}: wrote {rel}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
