"""Extract the nVidia pushbuffer tables from nvidia-hardware-envytools §2.8.

    commands: §2.8.3 "The pusher pseudocode - pre-GF100": each branch that matches the first
              word of a command (`(word & MASK) == VALUE`, `(word & 3) == N`, `word == VALUE`)
              and the comment naming it, with the fields the branch takes out of the word
              (`(word >> SHIFT) & MASK`, `word & MASK`) and the mode/chip conditions.
    IB entry: §2.8.3 "IB mode", the "Word 0:" / "Word 1:" bit lists.
    methods:  §2.8.4 "Puller builtin methods", the `mthd 0xNNNN / 0xNNN: NAME [chips]` headings,
              with the description of the method table's row and, where the document lists
              them, the parameter's fields (`bits 0-2: operation` and its values).

What the document says in prose (a parameter that is the whole word, the semaphore address
split over two methods) comes from corrections/nvidia-packets.toml, each entry with its reason.
The result is hal/regdb/packets/nvidia.toml, generated like the other tables and turned into
`baregpu_regs::nvidia::packets` by regdb-gen.
"""

from __future__ import annotations

import re

import regdb

DOCUMENT = "nvidia-hardware-envytools.txt"
DOC_LABEL = "nvidia-hardware-envytools"

# dma_state members the pseudocode assigns, and the field names they become.
STATE_FIELDS = {"mthd": "METHOD", "subc": "SUBCHANNEL", "mcnt": "COUNT", "dma_get": "TARGET"}


def unescape(s: str) -> str:
    return s.replace("\\_", "_").replace("\\&", "&").replace("\\star", "*")


def section(text: str, start: str, end: str) -> str:
    a = text.find(start)
    if a < 0:
        raise regdb.ExtractError(f"section {start!r} not found")
    b = text.find(end, a)
    if b < 0:
        raise regdb.ExtractError(f"end of section {start!r} ({end!r}) not found")
    return text[a:b]


def mask_bits(mask: int) -> tuple[int, int]:
    """(msb, lsb) of a contiguous mask."""
    lsb = (mask & -mask).bit_length() - 1
    msb = mask.bit_length() - 1
    if mask != ((1 << (msb + 1)) - 1) ^ ((1 << lsb) - 1):
        raise regdb.ExtractError(f"mask {mask:#x} is not contiguous")
    return msb, lsb


def chips_of(condition: str) -> str:
    m = re.search(r"gpu >= (\w+)", condition)
    return f"{m.group(1)}-" if m else "NV4-"


def mode_of(condition: str) -> str:
    if "!ib_enable" in condition:
        return "dma"
    if "ib_enable" in condition:
        return "ib"
    return "both"


COND = re.compile(
    r"if \((?:\(word & (0x[0-9a-f]+|\d+)\) == (0x[0-9a-f]+|\d+)|word == (0x[0-9a-f]+))(.*)\)\s*\{"
)
FIELD = re.compile(r"(?:dma_state\.(\w+)|(dma_get)) = (?:\(word >> (\d+)\) & (0x[0-9a-f]+|\d+)|word & (0x[0-9a-f]+))")


def commands(text: str) -> list[dict]:
    code = unescape(section(text, "The pusher pseudocode - pre-GF100", "# 2.8.4"))
    lines = code.splitlines()
    out: list[dict] = []
    for i, line in enumerate(lines):
        m = COND.search(line)
        if not m:
            continue
        comment = re.search(r"/\*\s*(.*?)\s*\*/", lines[i + 1]) if i + 1 < len(lines) else None
        if not comment:
            continue  # the SLI conditional branch has no name
        if m.group(3):
            mask, value = 0xFFFFFFFF, int(m.group(3), 16)
        else:
            mask, value = int(m.group(1), 0), int(m.group(2), 0)
        doc_name = comment.group(1)
        cmd = {
            "name": re.sub(r"[^A-Za-z0-9]+", "_", doc_name).strip("_").upper(),
            "doc_name": doc_name,
            "mask": mask,
            "value": value,
            "modes": mode_of(m.group(4)),
            "chips": chips_of(m.group(4)),
            "words": 1,
            "fields": [],
        }
        for body in lines[i + 2 :]:
            if "} else" in body or COND.search(body):
                break
            ni = re.search(r"dma_state\.ni = (\d)", body)
            if ni:
                cmd["non_increasing"] = ni.group(1) == "1"
            f = FIELD.search(body)
            if not f:
                continue
            member = f.group(1) or f.group(2)
            if f.group(5):
                field_mask = int(f.group(5), 16) & ~mask
            else:
                width_mask = int(f.group(4), 0)
                field_mask = width_mask << int(f.group(3))
            msb, lsb = mask_bits(field_mask)
            field = {"name": STATE_FIELDS[member], "word": 0, "msb": msb, "lsb": lsb}
            if member in ("mthd", "dma_get"):
                # The method field and jump targets hold byte-address bits from bit 2 up
                # ("mthd 0x0050 / 0x014": address / index).
                field["address_lsb"] = lsb
            cmd["fields"].append(field)
        out.append(cmd)
    # The second word of the long non-increasing command: "dma_state.mcnt = word & 0xffffff"
    # in the `lenp` branch.
    m = re.search(r"long non-inc methods command - method count[^;]*?dma_state\.lenp = 0;\s*dma_state\.mcnt = word & (0x[0-9a-f]+);", code)
    if not m:
        raise regdb.ExtractError("the long non-increasing count word is not in the pseudocode")
    msb, lsb = mask_bits(int(m.group(1), 16))
    for cmd in out:
        if cmd["name"] == "LONG_NON_INCREASING_METHODS":
            cmd["words"] = 2
            cmd["fields"].append({"name": "COUNT", "word": 1, "msb": msb, "lsb": lsb})
    return out


ENTRY_BIT = re.compile(r"^- bits? (\d+)(?:-(\d+))?: ([A-Z][A-Z_ ]*[A-Z])\b")


def ib_entry(text: str) -> dict:
    block = unescape(section(text, "The IB entry is made of two 32-bit words", "When an IB entry is read"))
    fields, word = [], None
    for line in block.splitlines():
        w = re.match(r"^(?:#+\s*)?Word (\d+):", line.strip())
        if w:
            word = int(w.group(1))
            continue
        m = ENTRY_BIT.match(line.strip())
        if m and word is not None:
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) else lo
            fields.append({"name": m.group(3).replace(" ", "_"), "word": word, "msb": hi, "lsb": lo})
    if not fields:
        raise regdb.ExtractError("no IB entry fields found")
    return {"name": "IB_ENTRY", "doc_name": "IB entry", "words": 2, "fields": fields}


HEADING = re.compile(r"^[#\s]*mthd (0x[0-9a-f]{4}) / (0x[0-9a-f]{3}): ([A-Z_]+(?: [A-Z_]+)*)(?=\s*\[|\s*$|\s+[A-Z][a-z])")
ROW = re.compile(r"^(0x[0-9a-f]{4})\t([^\t]+)\t([^\t]+)\t(.*)$")


def methods(text: str) -> list[dict]:
    puller = unescape(section(text, "# 2.8.4 Puller", "# 2.9 PGRAPH"))
    rows = {}
    for line in puller.splitlines():
        m = ROW.match(line)
        if m:
            rows[int(m.group(1), 16)] = (m.group(2).strip(), m.group(4).strip())
    out = []
    lines = puller.splitlines()
    for i, line in enumerate(lines):
        m = HEADING.match(line)
        if not m:
            continue
        address = int(m.group(1), 16)
        if int(m.group(2), 16) != address >> 2:
            raise regdb.ExtractError(f"method heading {line!r}: index is not address / 4")
        name = m.group(3).replace(" ", "_")
        if address not in rows:
            raise regdb.ExtractError(f"method {name} ({address:#x}) is not in the method table")
        chips, description = rows[address]
        method = {
            "name": name,
            "method": address,
            "chips": chips,
            "description": description,
            "object": "[O]" in line,
            "fields": [],
        }
        # "bits 0-2: operation" and its "- N: NAME" values, up to the next heading.
        for j in range(i + 1, len(lines)):
            if HEADING.match(lines[j]) or lines[j].startswith("# "):
                break
            b = re.match(r"^#*\s*bits (\d+)-(\d+): (\w+)", lines[j].strip())
            if b:
                method["fields"].append(
                    {"name": b.group(3).upper(), "word": 0, "msb": int(b.group(2)), "lsb": int(b.group(1)), "values": []}
                )
                continue
            v = re.match(r"^- (\d+): ([A-Z_]+)", lines[j].strip())
            if v and method["fields"]:
                method["fields"][-1]["values"].append({"name": v.group(2), "value": int(v.group(1))})
        out.append(method)
    out.sort(key=lambda m: m["method"])
    return out


def load_corrections() -> dict:
    import packets  # noqa: PLC0415 (shared loader, which checks every entry has a reason)

    data = packets.load_corrections("nvidia")
    for kind in ("method_field", "drop_value"):
        for entry in data.get(kind, []):
            if not entry.get("reason"):
                raise regdb.ExtractError(f"every [[{kind}]] correction needs a reason: {entry}")
    return data


def apply_corrections(ms: list[dict], corrections: dict) -> None:
    by_name = {m["name"]: m for m in ms}

    def method(entry: dict) -> dict:
        if entry["method"] not in by_name:
            raise regdb.ExtractError(f"correction for an unknown method: {entry}")
        return by_name[entry["method"]]

    for entry in corrections.get("method_field", []):
        keys = {k: entry[k] for k in ("name", "msb", "lsb", "address_lsb") if k in entry}
        method(entry)["fields"].append({"word": 0, "values": [], **keys})
    for entry in corrections.get("drop_value", []):
        fields = [f for f in method(entry)["fields"] if f["name"] == entry["field"]]
        before = sum(len(f["values"]) for f in fields)
        for f in fields:
            f["values"] = [v for v in f["values"] if v["name"] != entry["value"]]
        if sum(len(f["values"]) for f in fields) == before:
            raise regdb.ExtractError(f"[[drop_value]] matches no extracted value: {entry}")


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def field_lines(kind: str, f: dict) -> list[str]:
    out = ["", f"[[{kind}.field]]", f"name = {quote(f['name'])}", f"word = {f['word']}", f"msb = {f['msb']}", f"lsb = {f['lsb']}"]
    if "address_lsb" in f:
        out.append(f"address_lsb = {f['address_lsb']}")
    for v in f.get("values", []):
        out += ["", f"[[{kind}.field.value]]", f"name = {quote(v['name'])}", f"value = {v['value']}"]
    return out


def build(text: str) -> str:
    corrections = load_corrections()
    text = regdb.apply_text_corrections(text, corrections)
    ms = methods(text)
    apply_corrections(ms, corrections)
    out = [
        f"# Generated by hal/regdb/extract/extract.py from {DOCUMENT}; do not edit.",
        "",
        "[meta]",
        'family = "nvidia"',
        f"document = {quote(DOCUMENT)}",
        f"doc_label = {quote(DOC_LABEL)}",
    ]
    for c in commands(text):
        out += [
            "",
            "[[command]]",
            f"name = {quote(c['name'])}",
            f"doc_name = {quote(c['doc_name'])}",
            'section = "2.8.3"',
            f"chips = {quote(c['chips'])}",
            f"modes = {quote(c['modes'])}",
            f"mask = 0x{c['mask']:08x}",
            f"value = 0x{c['value']:08x}",
            f"words = {c['words']}",
        ]
        if "non_increasing" in c:
            out.append(f"non_increasing = {'true' if c['non_increasing'] else 'false'}")
        for f in c["fields"]:
            out += field_lines("command", f)
    e = ib_entry(text)
    out += ["", "[[entry]]", f"name = {quote(e['name'])}", f"doc_name = {quote(e['doc_name'])}", 'section = "2.8.3"', f"words = {e['words']}"]
    for f in e["fields"]:
        if f["name"] in ("ADDRESS_LOW", "ADDRESS_HIGH"):
            # "bits 2-31 of pushbuffer start address", "bits 32-39 of pushbuffer start address"
            f["address_lsb"] = f["lsb"] if f["name"] == "ADDRESS_LOW" else 32
        out += field_lines("entry", f)
    for m in ms:
        out += [
            "",
            "[[method]]",
            f"name = {quote(m['name'])}",
            f"method = 0x{m['method']:04x}",
            'section = "2.8.4"',
            f"chips = {quote(m['chips'])}",
            f"description = {quote(m['description'])}",
        ]
        if m["object"]:
            out.append("object = true")
        for f in m["fields"]:
            out += field_lines("method", f)
    return "\n".join(out) + "\n"
