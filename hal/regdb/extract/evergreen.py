"""Radeon Evergreen / Cayman register database from amd-evergreen-cayman-acceleration.txt.

The document has no register reference: it names registers and fields in prose
(`VGT_GS_MODE.COMPUTE_MODE = 1`, `CB_COLOR<mrt>_INFO.FAST_CLEAR`) and gives no per-register
offsets (only the SET_CONFIG_REG / SET_CONTEXT_REG range bases of §9, which are PM4 constants,
not registers). So this extractor works the other way round from r5xx.py:

1. it finds the document's sections (numbered headings checked against the table of contents);
2. it scans the text for register names with the known block prefixes (`CB_`, `DB_`, `PA_`,
   `VGT_`, `SPI_`, `SQ_`, `SX_`, `GDS_`, `GRBM_`, `CP_`, ...), including the `REG.FIELD` and
   `REG:FIELD` notations, brace groups (`DB_{Z,STENCIL}_READ_BASE`) and index placeholders
   (`CB_COLOR<mrt>_INFO`, `CB_COLOR*_BASE`, `SPI_PS_INPUT_CNTL_*`), recording the section of first
   mention;
3. it checks them against the fact table, which lives in corrections/evergreen.toml as `[[add]]`
   entries (offsets and bit positions from public driver headers, each with its source), and the
   top-level `[[not_covered]]` list (register or register+field the database leaves out, each with
   a reason). A name the document uses with a field, or a register name it mentions at all, that
   is neither a fact nor listed as not covered fails the extraction, and so does a fact whose
   source does not cite the section where the document first names the register.

The registers themselves are added by regdb.apply_register_corrections from the `[[add]]` entries;
extract() returns the database header and the blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import regdb

FAMILY = "evergreen"
DOCUMENT = "amd-evergreen-cayman-acceleration.txt"
DOC_LABEL = "amd-evergreen-cayman-acceleration"
TITLE = "Radeon Evergreen / Cayman (HD 5000 / HD 6900)"

# Block prefixes of register names, longest first so that `SCRATCH_` wins over nothing else.
PREFIXES = ("SCRATCH", "GRBM", "VGT", "SPI", "GDS", "RLC", "CB", "DB", "PA", "SQ", "SX", "CP",
            "TA", "TD", "GB")

# Blocks in database order: name, description. A register's block is its name prefix, except that
# the scratch registers belong to the CP and WAIT_UNTIL to the GRBM (the document calls it "the GRBM
# Wait Until register", §9.4.8).
BLOCKS = [
    ("GRBM", "Graphics register bus manager: soft reset, wait-until, shader-engine index"),
    ("SRBM", "System register bus manager: system status and soft reset"),
    ("IH", "Interrupt handler: the interrupt ring and its bus-interface controls"),
    ("CP", "Command processor: ring buffer, micro-engine RAM, scratch, coherency"),
    ("RLC", "Run-list controller"),
    ("GB", "Graphics backend address configuration"),
    ("VGT", "Vertex grouper / tessellator: draw and dispatch state"),
    ("PA", "Primitive assembly, setup unit and scan converter (PA_SU, PA_SC)"),
    ("SPI", "Shader processor input: interpolation and compute thread setup"),
    ("SQ", "Sequencer: shader resources, rings, LDS and constants"),
    ("SX", "Shader export"),
    ("GDS", "Global data share"),
    ("DB", "Depth/stencil block"),
    ("CB", "Color block"),
]

MENTION_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:mm)?"
    r"((?:" + "|".join(PREFIXES) + r")(?:[0-9]+)?_"  # prefix, optionally CB0_-style
    r"(?:[A-Z0-9_*]|<[a-z]+>(?=_)|\{[A-Z0-9_, ]+\})*)"  # rest, with <mrt>_ and {A,B} groups
    r"(?:[.:]([A-Z][A-Z0-9_]*))?"  # .FIELD or :FIELD
)
WORD_RE = re.compile(r"[A-Z][A-Z0-9_]*")


@dataclass
class Mention:
    name: str  # as spelled in the document after brace expansion, without a trailing `_`
    field: str | None
    section: str


# ---------------------------------------------------------------------------------------------
# Sections


def _norm_title(t: str) -> str:
    return re.sub(r"[^A-Z0-9]+", " ", t.upper()).strip()


def toc_titles(text: str) -> dict[str, str]:
    """Section number -> normalised title, from the table of contents."""
    toc: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+(?:\.\d+)?)\.?\s+(.+?)(?:\.{2,})?\s*\t\s*\d+\s*$", line)
        if m:
            toc[m.group(1)] = _norm_title(m.group(2).rstrip("."))
    if "9.7" not in toc or "2.1" not in toc:
        raise regdb.ExtractError("table of contents not found where expected")
    return toc


def sections(text: str) -> list[tuple[int, str]]:
    """(character offset, section number) for every heading in the body, in order."""
    toc = toc_titles(text)
    body_start = None
    for m in re.finditer(r"^1\. Introduction\s*$", text, re.M):
        body_start = m.start()
    if body_start is None:
        raise regdb.ExtractError("body heading '1. Introduction' not found")
    out: list[tuple[int, str]] = []
    current = ""
    for m in re.finditer(r"^.*$", text[body_start:], re.M):
        line = m.group(0)
        pos = body_start + m.start()
        # Headings may be glued to the next heading ("9.2 Initialization Packets**9.2.1 ...").
        for part_m in re.finditer(r"(?:^|\*\*)\s*(\d+(?:\.\d+){0,2})\.?\s+[*\s]*([^*]+)", line):
            num, title = part_m.group(1), part_m.group(2)
            depth = num.count(".")
            if depth <= 1:
                if toc.get(num) and _norm_title(title).startswith(toc[num][:12]):
                    current = num
                    out.append((pos + part_m.start(1), num))
            elif depth == 2 and current and num.rsplit(".", 1)[0] == current.split(".")[0] + "." + (
                current.split(".") + ["0"]
            )[1]:
                out.append((pos + part_m.start(1), num))
    return out


def section_at(secs: list[tuple[int, str]], pos: int) -> str:
    found = ""
    for start, num in secs:
        if start <= pos:
            found = num
        else:
            break
    return found


# ---------------------------------------------------------------------------------------------
# Mentions


def _expand(name: str) -> list[str]:
    m = re.search(r"\{([^}]*)\}", name)
    if not m:
        return [name]
    out = []
    for alt in m.group(1).split(","):
        out += _expand(name[: m.start()] + alt.strip() + name[m.end():])
    return out


def mentions(text: str) -> list[Mention]:
    secs = sections(text)
    out = []
    for m in MENTION_RE.finditer(text):
        raw, field = m.group(1), m.group(2)
        for name in _expand(raw):
            name = name.rstrip("_")
            if "_" not in name:
                continue
            out.append(Mention(name, field, section_at(secs, m.start())))
    return out


def pattern_key(name: str) -> str:
    """Name with every index (digit run, `<n>`, `<mrt>`, `*`) replaced by `#`."""
    key = re.sub(r"<[a-z]+>|\*", "#", name)
    key = re.sub(r"[0-9]+", "#", key)
    return re.sub(r"#+", "#", key)


def resolve(name: str, facts: list[dict]) -> list[dict]:
    """Fact entries a document spelling refers to: the register of that name, or else the register
    arrays whose pattern (index replaced) matches the spelling's pattern."""
    exact = [f for f in facts if f["name"] == name]
    if exact:
        return exact
    key = pattern_key(name)
    if "#" in pattern_key(re.sub(r"[0-9]+", "", name)):
        # a placeholder spelling (CB_COLOR*_BASE, DB_SRESULTS_COMPARE_STATE*) names every register
        # of the pattern
        return [f for f in facts if pattern_key(f["name"]) == key]
    # a concrete instance (CB_COLOR1_INFO) or the unindexed name of a per-buffer register
    # (VGT_STRMOUT_BUFFER_OFFSET) names the array holding it
    keys = {key} if "#" in key else {key + "_#", key + "#"}
    return [f for f in facts if "count" in f and pattern_key(f["name"]) in keys]


# ---------------------------------------------------------------------------------------------
# Extraction


def _cited_sections(source: str) -> list[str]:
    return re.findall(re.escape(DOC_LABEL) + r" §(\d+(?:\.\d+)*)", source)


def check(text: str, corrections: dict) -> dict[str, str]:
    """Check the fact table against the document; return block name -> section of first mention."""
    facts = corrections.get("add", [])
    not_covered = corrections.get("not_covered", [])
    problems: list[str] = []

    for entry in not_covered:
        if not entry.get("reason"):
            problems.append(f"[[not_covered]] {entry} has no reason")
    nc_regs = {e["register"] for e in not_covered if "field" not in e}
    nc_fields = {(e["register"], e["field"]) for e in not_covered if "field" in e}
    values = {v["name"] for f in facts for fld in f.get("field", []) for v in fld.get("value", [])}

    found = mentions(text)
    first_section: dict[str, str] = {}
    used_nc: set = set()
    for mt in found:
        first_section.setdefault(mt.name, mt.section)
    seen: set = set()
    for mt in found:
        if (mt.name, mt.field) in seen:
            continue
        seen.add((mt.name, mt.field))
        if mt.name in nc_regs:
            used_nc.add((mt.name, None))
            continue
        regs = resolve(mt.name, facts)
        if not regs:
            if mt.name in values and mt.field is None:
                continue  # an enumerated value (CB_RESOLVE, ...), not a register
            problems.append(
                f"§{mt.section}: {mt.name}{'.' + mt.field if mt.field else ''} is neither a fact "
                "([[add]]) nor listed in [[not_covered]]"
            )
            continue
        if mt.field is None:
            continue
        if (mt.name, mt.field) in nc_fields:
            used_nc.add((mt.name, mt.field))
            continue
        for reg in regs:
            if mt.field not in {f["name"] for f in reg.get("field", [])}:
                problems.append(
                    f"§{mt.section}: {mt.name}.{mt.field}: field missing from {reg['name']} and not "
                    "listed in [[not_covered]]"
                )

    for entry in not_covered:
        key = (entry["register"], entry.get("field"))
        if key not in used_nc:
            problems.append(f"[[not_covered]] {key} is not (or no longer) named by the document")

    # Every fact cites a section of the document; a register the document names cites the section
    # where it is first named.
    secs = {num for _, num in sections(text)}
    named_first: dict[str, str] = {}
    for mt in found:
        for reg in resolve(mt.name, facts):
            named_first.setdefault(reg["name"], mt.section)
    for f in facts:
        cited = _cited_sections(f.get("source", ""))
        if not cited:
            problems.append(f"{f['name']}: source names no section of {DOC_LABEL}")
        for c in cited:
            if c not in secs:
                problems.append(f"{f['name']}: cites §{c}, which the document does not have")
        want = named_first.get(f["name"])
        if want and cited and cited[0] != want:
            problems.append(f"{f['name']}: first named in §{want} but the source cites §{cited[0]}")
        if not f.get("reason"):
            problems.append(f"{f['name']}: [[add]] without reason")

    if problems:
        raise regdb.ExtractError("evergreen fact table does not match the document:\n  "
                                 + "\n  ".join(problems))

    block_section: dict[str, str] = {}
    for mt in found:
        for reg in resolve(mt.name, facts):
            block_section.setdefault(reg["block"], mt.section)
    for f in facts:
        if f["block"] not in block_section:
            block_section[f["block"]] = _cited_sections(f["source"])[0]
    return block_section


def extract(text: str) -> regdb.Database:
    corrections = regdb.load_corrections(FAMILY)
    block_section = check(text, corrections)
    used = {f["block"] for f in corrections.get("add", [])}
    unknown = used - {name for name, _ in BLOCKS}
    if unknown:
        raise regdb.ExtractError(f"facts use undeclared blocks: {sorted(unknown)}")
    db = regdb.Database(family=FAMILY, title=TITLE, document=DOCUMENT, doc_label=DOC_LABEL)
    for name, description in BLOCKS:
        if name in used:
            db.blocks.append(
                regdb.Block(name=name, description=description,
                            source=f"{DOC_LABEL} §{block_section[name]}", base=0, relative=False)
            )
    return db
