"""Mutated bundle tars for the install fuzz test: a deterministic corpus and the operators
hypothesis draws from.

A mutation starts from a real signed bundle tar (its members and their bytes) and applies
one to three operators of three families:

- **structure** (`STRUCTURE`): member names (absolute, `..`, other top directories, long
  GNU/pax names, odd spellings), types (links, devices, fifos, sparse, unknown), declared
  sizes (short, long, huge, pax `size`), duplicates (a second `bundle.json` after the
  signed one), drops, reordering, extra members, pax headers (path, linkpath, sparse
  keys, global headers), modes and owners;
- **re-signed** (`RESIGNED`): `bundle.json` itself is changed — its file list (paths
  outside the bundle, sizes, digests, directories, too many entries), version, target —
  and signed again with the trusted key, so the archive passes the signature check and
  exercises extraction and the integrity rule. The program's bytes are never changed
  under a valid signature: what the runtime does with a corrupted program is the runner
  fuzz's subject, not install's;
- **bytes** (`BYTES`), after the tar is written: header or data bytes flipped (with and
  without a recomputed header checksum), raw size and type fields rewritten,
  truncation anywhere, blocks dropped, duplicated or appended, and gzip/bzip2/xz
  wrapping (sometimes truncated).

Names that escape aim at the canary directory beside the device root, so a write
outside the slot is found by looking there.
"""

from __future__ import annotations

import bz2
import copy
import dataclasses
import gzip
import hashlib
import io
import json
import lzma
import random
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.bundle_format import canonical_json


@dataclass
class Member:
    info: tarfile.TarInfo
    data: bytes | None  # the bytes written after the header (None: no data)


@dataclass
class Mutant:
    """A tar under construction: its members, the format it is written in, and its recipe."""

    members: list[Member]
    canary: Path  # absolute path of the canary directory
    top: str  # the bundle's top directory in the archive, e.g. "tiny-2.0.0"
    sign: Callable[[bytes], bytes]  # bundle.json bytes -> bundle.sig bytes (trusted key)
    format: int = tarfile.PAX_FORMAT
    recipe: list[str] = dataclasses.field(default_factory=list)

    def find(self, rel: str) -> Member | None:
        return next((m for m in self.members if m.info.name == f"{self.top}/{rel}"), None)


def read_members(tar_path: Path) -> list[Member]:
    with tarfile.open(tar_path) as tar:
        members = []
        for info in tar.getmembers():
            handle = tar.extractfile(info) if info.isfile() else None
            members.append(Member(copy.copy(info), handle.read() if handle else None))
    return members


def write_tar(mutant: Mutant) -> bytes:
    """The members as tar bytes; a member tarfile cannot encode in this format is written as
    the raw bytes of its nearest encodable form (the operator then did nothing)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=mutant.format) as tar:
        for member in mutant.members:
            info = copy.copy(member.info)
            data = member.data or b""
            try:
                block = info.tobuf(mutant.format, tar.encoding, "surrogateescape")  # type: ignore[arg-type]
            except (ValueError, UnicodeError, OverflowError):
                continue
            tar.fileobj.write(block)
            tar.offset += len(block)
            if member.data is not None:
                tar.fileobj.write(data)
                padding = (-len(data)) % tarfile.BLOCKSIZE
                tar.fileobj.write(b"\0" * padding)
                tar.offset += len(data) + padding
    return out.getvalue()


# ---- structure ------------------------------------------------------------------------
def _pick(rng: random.Random, mutant: Mutant) -> Member:
    return rng.choice(mutant.members)


def _escape(rng: random.Random, mutant: Mutant) -> str:
    """A name that, extracted naively, lands in the canary directory or elsewhere outside."""
    depth = rng.randint(1, 7)
    return rng.choice(
        [
            f"{mutant.canary}/evil-{rng.randint(0, 99)}",
            f"{mutant.top}/{'../' * depth}canary/evil",
            f"{'../' * depth}canary/evil",
            f"{mutant.top}/reports/../../{'../' * depth}canary/evil",
            f"/{mutant.top}/model.pte",
            f"{mutant.top}/./../{mutant.top}/model.pte",
        ]
    )


def rename(rng: random.Random, mutant: Mutant) -> str:
    member = _pick(rng, mutant)
    old = member.info.name
    base = old.split("/", 1)[1] if "/" in old else old
    choices = [
        _escape(rng, mutant),
        base,  # out of the top directory
        f"other/{base}",
        f"{mutant.top}/{mutant.top}/{base}",
        f"./{old}",
        old.replace("/", "//"),
        old + "/",
        f"{mutant.top}/" + "d" * rng.choice([99, 100, 101, 155, 156, 255, 256, 1000, 5000]),
        f"{mutant.top}/" + "/".join(["sub"] * rng.randint(2, 60)) + "/x",
        old.upper(),
        f"{mutant.top}/bundle.json",
        f"{mutant.top}/model.pte",
        f"{mutant.top}/caf\u00e9-\u2603",
        f"{mutant.top}/\udcff-bytes",
        "",
        ".",
        f"{mutant.top}/.",
    ]
    member.info.name = rng.choice(choices)
    return f"rename {old!r} -> {member.info.name[:80]!r}"


def retype(rng: random.Random, mutant: Mutant) -> str:
    member = _pick(rng, mutant)
    kind = rng.choice(
        [
            tarfile.SYMTYPE,
            tarfile.LNKTYPE,
            tarfile.CHRTYPE,
            tarfile.BLKTYPE,
            tarfile.FIFOTYPE,
            tarfile.DIRTYPE,
            tarfile.CONTTYPE,
            tarfile.GNUTYPE_SPARSE,
            tarfile.GNUTYPE_LONGNAME,
            tarfile.GNUTYPE_LONGLINK,
            b"Z",
            b"7",
        ]
    )
    member.info.type = kind
    member.info.linkname = rng.choice(
        [
            "/etc/passwd",
            str(mutant.canary),
            f"{mutant.canary}/evil",
            "../../../canary",
            f"{mutant.top}/model.pte",
            "model.pte",
            member.info.name,
            "",
        ]
    )
    member.info.devmajor, member.info.devminor = rng.choice([(1, 3), (8, 0), (0, 0)])
    if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.DIRTYPE, tarfile.FIFOTYPE):
        keep = rng.random() < 0.3  # data left behind the header: it becomes the next header
        member.data = member.data if keep else None
        member.info.size = len(member.data or b"") if keep else 0
    return f"retype {member.info.name[:60]!r} to {kind!r} -> {member.info.linkname[:60]!r}"


def resize(rng: random.Random, mutant: Mutant) -> str:
    member = _pick(rng, mutant)
    actual = len(member.data or b"")
    declared = rng.choice(
        [
            0,
            max(actual - 1, 0),
            actual + 1,
            actual + 512,
            actual * 2 + 7,
            2**31,
            2**33,
            8 << 30,
            (8 << 30) + 1,
            2**40,
            8**11 - 1,
        ]
    )
    member.info.size = declared
    if rng.random() < 0.5 and member.data is not None and declared < actual:
        member.data = member.data[:declared]
    return f"resize {member.info.name[:60]!r} {actual} -> declared {declared}"


def duplicate(rng: random.Random, mutant: Mutant) -> str:
    member = _pick(rng, mutant)
    twin = Member(copy.copy(member.info), member.data)
    if twin.data is not None and rng.random() < 0.7:
        twin.data = rng.choice(
            [
                b'{"forged": true}\n',
                twin.data[::-1],
                b"\0" * len(twin.data),
                twin.data + b"tail",
            ]
        )
        twin.info.size = len(twin.data)
    if member.info.name.endswith("/bundle.json") and rng.random() < 0.6:
        doc = json.loads(member.data or b"{}")
        doc.setdefault("model", {})["version"] = "99.0.0"
        twin.data = canonical_json(doc)
        twin.info.size = len(twin.data)
    where = rng.choice(["before", "after", "end"])
    index = mutant.members.index(member)
    position = {"before": index, "after": index + 1, "end": len(mutant.members)}[where]
    mutant.members.insert(position, twin)
    return f"duplicate {member.info.name[:60]!r} ({where})"


def drop(rng: random.Random, mutant: Mutant) -> str:
    member = _pick(rng, mutant)
    mutant.members.remove(member)
    return f"drop {member.info.name[:60]!r}"


def reorder(rng: random.Random, mutant: Mutant) -> str:
    rng.shuffle(mutant.members)
    return "reorder"


def _info(
    name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, link: str = ""
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname, info.mode = kind, size, link, 0o644
    return info


def add_member(rng: random.Random, mutant: Mutant) -> str:
    top = mutant.top
    payload = b"#!/bin/sh\necho pwned\n"
    extras: list[list[Member]] = [
        [Member(_info(f"{top}/payload.sh", size=len(payload)), payload)],
        [Member(_info(f"{top}/extra-dir", tarfile.DIRTYPE), None)],
        [Member(_info(f"{top}/null", tarfile.CHRTYPE), None)],
        [Member(_info(f"{top}/disk", tarfile.BLKTYPE), None)],
        [Member(_info(f"{top}/pipe", tarfile.FIFOTYPE), None)],
        [Member(_info(f"{top}/passwd", tarfile.SYMTYPE, link="/etc/passwd"), None)],
        [
            Member(_info(f"{top}/reports", tarfile.SYMTYPE, link=str(mutant.canary)), None),
            Member(_info(f"{top}/reports/validation.json", size=len(payload)), payload),
        ],
        [
            Member(_info(f"{top}/d", tarfile.SYMTYPE, link="../../../canary"), None),
            Member(_info(f"{top}/d/evil", size=len(payload)), payload),
        ],
        [Member(_info(f"{top}/hard", tarfile.LNKTYPE, link="/etc/shadow"), None)],
        [Member(_info(f"{top}/hard2", tarfile.LNKTYPE, link=f"{top}/model.pte"), None)],
        [Member(_info(_escape(rng, mutant), size=len(payload)), payload)],
        [Member(_info(f"{top}/model.pte/inner", size=len(payload)), payload)],
        [Member(_info(f"other-{top}/bundle.json", size=2), b"{}")],
        [Member(_info(f"{top}/f{i}", size=1), b"x") for i in range(rng.choice([250, 300]))],
    ]
    added = rng.choice(extras)
    position = rng.randint(0, len(mutant.members))
    mutant.members[position:position] = added
    return f"add {[m.info.name[:40] for m in added][:3]} at {position}"


def pax_headers(rng: random.Random, mutant: Mutant) -> str:
    member = _pick(rng, mutant)
    mutant.format = tarfile.PAX_FORMAT
    key, value = rng.choice(
        [
            ("path", _escape(rng, mutant)),
            ("path", f"{mutant.top}/bundle.json"),
            ("linkpath", "/etc/passwd"),
            ("size", str(rng.choice([0, 1, 2**40, 10**30]))),
            ("size", "-1"),
            ("size", "12abc"),
            ("GNU.sparse.major", "1"),
            ("GNU.sparse.minor", "0"),
            ("GNU.sparse.size", str(2**40)),
            ("GNU.sparse.map", "0,1,999999999,1"),
            ("GNU.sparse.numblocks", "999999"),
            ("GNU.sparse.name", _escape(rng, mutant)),
            ("mtime", "1e400"),
            ("uid", str(2**70)),
            ("hdrcharset", "BINARY"),
            ("comment", "c" * rng.choice([10, 100_000])),
        ]
    )
    member.info.pax_headers = {**member.info.pax_headers, key: value}
    if key == "size" and rng.random() < 0.5:
        member.info.size = 0
    if rng.random() < 0.2:  # a global header too
        glob = tarfile.TarInfo("pax_global_header")
        glob.type = tarfile.XGLTYPE
        glob.pax_headers = {key: value}
        mutant.members.insert(0, Member(glob, None))
    return f"pax {key}={value[:40]!r} on {member.info.name[:40]!r}"


def gnu_format(rng: random.Random, mutant: Mutant) -> str:
    mutant.format = rng.choice([tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT])
    return f"format {mutant.format}"


def attributes(rng: random.Random, mutant: Mutant) -> str:
    member = _pick(rng, mutant)
    member.info.mode = rng.choice([0, 0o4755, 0o6777, 0o777, 0o1000])
    member.info.uid = member.info.gid = rng.choice([0, 65534, 2**21 - 1])
    member.info.uname = rng.choice(["", "root", "x" * 31])
    member.info.mtime = rng.choice([0, -1, 2**33, 1_780_000_000])
    return f"attributes of {member.info.name[:40]!r}"


def change_content(rng: random.Random, mutant: Mutant) -> str:
    """A listed file's bytes changed without a new signature: the digest must catch it."""
    files = [m for m in mutant.members if m.data and not m.info.name.endswith(".json")]
    if not files:
        return "change_content: nothing to change"
    member = rng.choice(files)
    data = bytearray(member.data or b"")
    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    member.data = bytes(data)
    return f"flip a bit of {member.info.name[:40]!r} (not re-signed)"


STRUCTURE: tuple[Callable[[random.Random, Mutant], str], ...] = (
    rename,
    retype,
    resize,
    duplicate,
    drop,
    reorder,
    add_member,
    pax_headers,
    gnu_format,
    attributes,
    change_content,
)


# ---- re-signed ------------------------------------------------------------------------
def _document(mutant: Mutant) -> tuple[Member, dict[str, object]]:
    member = mutant.find("bundle.json")
    assert member is not None and member.data is not None
    doc: dict[str, object] = json.loads(member.data)
    return member, doc


def _reseal(mutant: Mutant, member: Member, doc: dict[str, object], canonical: bool) -> None:
    data = canonical_json(doc) if canonical else json.dumps(doc, indent=1).encode()
    member.data = data
    member.info.size = len(data)
    sig = mutant.find("bundle.sig")
    signature = mutant.sign(data)
    if sig is not None:
        sig.data = signature
        sig.info.size = len(signature)


def resign_listing(rng: random.Random, mutant: Mutant) -> str:
    member, doc = _document(mutant)
    files = doc["files"]
    assert isinstance(files, dict)
    model = files.get("model.pte", {"sha256": "0" * 64, "size": 1})
    name = rng.choice(
        [
            "../../canary/evil",
            f"{mutant.canary}/evil",
            "/etc/cron.d/evil",
            "a/../model.pte",
            "./model.pte",
            "",
            ".",
            "reports",
            "nul\x00name",
            "bundle.json",
            "bundle.sig",
            "reports//validation.json",
            "payload.sh",
            "x" * 300,
        ]
    )
    action = rng.choice(["add", "rename_model", "size", "sha", "drop_model", "many", "negative"])
    if action == "add":
        files[name] = dict(model)
    elif action == "rename_model":
        files[name] = files.pop("model.pte", model)
    elif action == "size":
        files["model.pte"] = {**model, "size": rng.choice([0, 1, 2**40, (8 << 30) + 1])}
    elif action == "sha":
        files["model.pte"] = {**model, "sha256": hashlib.sha256(b"other").hexdigest()}
    elif action == "drop_model":
        files.pop("model.pte", None)
    elif action == "many":
        for i in range(rng.choice([100, 300])):
            files[f"f{i}"] = {"sha256": "0" * 64, "size": 1}
    else:
        files["model.pte"] = {**model, "size": -5}
    _reseal(mutant, member, doc, canonical=rng.random() < 0.9)
    return f"re-signed listing: {action} {name[:40]!r}"


def resign_identity(rng: random.Random, mutant: Mutant) -> str:
    member, doc = _document(mutant)
    model = doc["model"]
    target = doc["target"]
    assert isinstance(model, dict) and isinstance(target, dict)
    field, value = rng.choice(
        [
            ("version", "0.0.1"),
            ("version", "1.0.0"),
            ("version", "2.0.0+rebuilt"),
            ("version", "3.0.0-rc.1"),
            ("version", "latest"),
            ("version", "9" * 200),
            ("version", "4.0.0"),
            ("name", "other-model"),
            ("arch", "aarch64"),
            ("schema_version", 7),
            ("files", "not-an-object"),
            ("profiles", [{"index": 0}]),
            ("prefill_opt", {"min": 2, "opt": 100, "max": 128}),  # beyond the program: smoke fails
        ]
    )
    if field == "prefill_opt":
        profiles = doc["profiles"]
        assert isinstance(profiles, list)
        profiles[-1]["dims"]["seq"] = value
    elif field in ("version", "name"):
        model[field] = value
    elif field == "arch":
        target["arch"] = value
    else:
        doc[field] = value
    _reseal(mutant, member, doc, canonical=True)
    return f"re-signed {field} = {str(value)[:40]!r}"


def resign_member_swap(rng: random.Random, mutant: Mutant) -> str:
    """Listing and member disagree in ways only extraction sees: a listed file stored as a
    link, a directory, or twice, under a valid signature."""
    member, doc = _document(mutant)
    files = doc["files"]
    assert isinstance(files, dict)
    payload = b"#!/bin/sh\necho pwned\n"
    listed = f"{mutant.top}/payload.sh"
    files["payload.sh"] = {"sha256": hashlib.sha256(payload).hexdigest(), "size": len(payload)}
    kind = rng.choice(["file", "symlink", "hardlink", "dir", "twice", "escape"])
    if kind == "file":
        mutant.members.append(Member(_info(listed, size=len(payload)), payload))
    elif kind == "symlink":
        mutant.members.append(
            Member(_info(listed, tarfile.SYMTYPE, link=f"{mutant.canary}/evil"), None)
        )
    elif kind == "hardlink":
        mutant.members.append(Member(_info(listed, tarfile.LNKTYPE, link="/etc/passwd"), None))
    elif kind == "dir":
        mutant.members.append(Member(_info(listed, tarfile.DIRTYPE), None))
    elif kind == "twice":
        mutant.members.append(Member(_info(listed, size=len(payload)), payload))
        mutant.members.append(Member(_info(listed, size=5), b"other"))
    else:
        mutant.members.append(
            Member(_info(f"{mutant.top}/../canary/payload.sh", size=len(payload)), payload)
        )
    _reseal(mutant, member, doc, canonical=True)
    return f"re-signed listing of payload.sh stored as {kind}"


RESIGNED: tuple[Callable[[random.Random, Mutant], str], ...] = (
    resign_listing,
    resign_identity,
    resign_member_swap,
)


# ---- bytes ----------------------------------------------------------------------------
def _headers(data: bytes) -> list[int]:
    """Offsets of the blocks that look like tar headers (a valid checksum)."""
    found = []
    for offset in range(0, len(data) - 511, 512):
        block = data[offset : offset + 512]
        stored = block[148:156].split(b"\0")[0].strip()
        try:
            expected = int(stored or b"-1", 8)
        except ValueError:
            continue
        if expected == sum(block[:148]) + 256 + sum(block[156:]):
            found.append(offset)
    return found


def _fix_checksum(data: bytearray, offset: int) -> None:
    data[offset + 148 : offset + 156] = b" " * 8
    total = sum(data[offset : offset + 512])
    data[offset + 148 : offset + 156] = b"%06o\0 " % total


def _pick_header(rng: random.Random, data: bytes) -> tuple[bytearray, int] | None:
    """A mutable copy of `data` and the offset of one of its tar headers (None: it has none)."""
    headers = _headers(data)
    return (bytearray(data), rng.choice(headers)) if headers else None


def flip_header(rng: random.Random, data: bytes) -> bytes:
    picked = _pick_header(rng, data)
    if picked is None:
        return data
    out, offset = picked
    for _ in range(rng.randint(1, 4)):
        out[offset + rng.randrange(512)] = rng.randrange(256)
    if rng.random() < 0.7:
        _fix_checksum(out, offset)
    return bytes(out)


def raw_field(rng: random.Random, data: bytes) -> bytes:
    picked = _pick_header(rng, data)
    if picked is None:
        return data
    out, offset = picked
    field, value = rng.choice(
        [
            ((124, 136), b"77777777777\0"),  # size: 8 GiB - 1
            ((124, 136), b"\x80" + b"\0" * 3 + b"\xff" * 8),  # base-256 huge size
            ((124, 136), b"\xff" * 12),  # base-256 negative size
            ((124, 136), b"not a num\0\0\0"),
            ((156, 157), rng.choice([b"1", b"2", b"3", b"4", b"6", b"S", b"L", b"x", b"g", b"\0"])),
            ((0, 100), b"../" * 33 + b"\0"),
            ((0, 100), b"/etc/passwd".ljust(100, b"\0")),
            ((157, 257), b"/etc/shadow".ljust(100, b"\0")),
            ((257, 263), b"ustar\0"),
            ((345, 500), b"../../../canary".ljust(155, b"\0")),  # ustar prefix
        ]
    )
    start, end = field
    out[offset + start : offset + end] = value[: end - start].ljust(end - start, b"\0")
    _fix_checksum(out, offset)
    return bytes(out)


def flip_anywhere(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def truncate(rng: random.Random, data: bytes) -> bytes:
    if len(data) < 2:
        return data
    cut = rng.choice([rng.randrange(len(data)), rng.randrange(0, len(data), 512), 0, 1, 511, 513])
    return data[:cut]


def blocks(rng: random.Random, data: bytes) -> bytes:
    count = len(data) // 512
    if count < 2:
        return data
    i = rng.randrange(count)
    block = data[i * 512 : (i + 1) * 512]
    choice = rng.choice(["drop", "duplicate", "zero", "garbage", "append"])
    if choice == "drop":
        return data[: i * 512] + data[(i + 1) * 512 :]
    if choice == "duplicate":
        return data[: i * 512] + block + data[i * 512 :]
    if choice == "zero":
        return data[: i * 512] + b"\0" * 512 + data[(i + 1) * 512 :]
    if choice == "garbage":
        return data[: i * 512] + rng.randbytes(512) + data[(i + 1) * 512 :]
    return data + rng.randbytes(rng.choice([1, 512, 4096]))


def compress(rng: random.Random, data: bytes) -> bytes:
    compressors: list[Callable[[bytes], bytes]] = [gzip.compress, bz2.compress, lzma.compress]
    packed = rng.choice(compressors)(data)
    if rng.random() < 0.4 and len(packed) > 1:
        packed = packed[: rng.randrange(1, len(packed))]
    elif rng.random() < 0.3:
        packed = flip_anywhere(rng, packed)
    return packed


BYTES: tuple[Callable[[random.Random, bytes], bytes], ...] = (
    flip_header,
    raw_field,
    flip_anywhere,
    truncate,
    blocks,
    compress,
)


StructureOp = Callable[[random.Random, Mutant], str]
BytesOp = Callable[[random.Random, bytes], bytes]


@dataclass(frozen=True)
class Recipe:
    """Which operators make one mutant: at most one re-signing, then structure, then bytes."""

    resigned: StructureOp | None
    structure: tuple[StructureOp, ...]
    raw: tuple[BytesOp, ...]


def draw_recipe(rng: random.Random) -> Recipe:
    resigned = rng.choice(RESIGNED) if rng.random() < 0.45 else None
    structure = tuple(rng.sample(STRUCTURE, rng.choice([0, 1, 1, 1, 2, 3])))
    raw_count = rng.choice([1, 1, 2]) if rng.random() < 0.35 or not (resigned or structure) else 0
    return Recipe(resigned, structure, tuple(rng.sample(BYTES, raw_count)))


def mutate(
    rng: random.Random,
    base: list[Member],
    recipe: Recipe,
    *,
    canary: Path,
    top: str,
    sign: Callable[[bytes], bytes],
) -> tuple[bytes, list[str]]:
    """One mutated tar (bytes) from `base` by `recipe`, and what each operator did."""
    mutant = Mutant([Member(copy.copy(m.info), m.data) for m in base], canary, top, sign)
    if recipe.resigned is not None:
        mutant.recipe.append(recipe.resigned(rng, mutant))
    for op in recipe.structure:
        mutant.recipe.append(op(rng, mutant))
    data = write_tar(mutant)
    for byte_op in recipe.raw:
        data = byte_op(rng, data)
        mutant.recipe.append(byte_op.__name__)
    return data, mutant.recipe
