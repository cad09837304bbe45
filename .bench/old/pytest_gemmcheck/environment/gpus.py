"""What a GPU physically is: its UUID and PCI bus id besides torch's index.

A GPU's index says little about which physical device ran a launch (it moves with the
visibility mask and between hosts), so :func:`gpu_identity` also records its UUID and PCI bus
id: DESIGN.md's "launches are not independent" evidence counts GPUs by those.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any


def _normalise_uuid(raw: Any, is_hip: bool) -> str | None:
    """'GPU-<uuid>' as nvidia-smi prints it (torch gives the bare form); ROCm's as given."""
    text = str(raw).strip() if raw is not None else ""
    if not text:
        return None
    if not is_hip and not text.startswith(("GPU-", "MIG-")):
        text = "GPU-" + text
    return text


def _bus_id_from_properties(props) -> str | None:
    """'00000000:19:00.0' from torch's PCI fields (recent torch releases have them)."""
    bus = getattr(props, "pci_bus_id", None)
    if bus is None:
        return None
    domain = getattr(props, "pci_domain_id", 0) or 0
    device = getattr(props, "pci_device_id", 0) or 0
    return f"{int(domain):08X}:{int(bus):02X}:{int(device):02X}.0"


def normalise_bus_id(text: str | None) -> str | None:
    """One spelling for PCI bus ids: nvidia-smi's 8-digit domain, upper case."""
    if not text:
        return None
    match = re.fullmatch(r"(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])", text.strip())
    if match is None:
        return text.strip()
    domain, bus, device, function = match.groups()
    return f"{int(domain or '0', 16):08X}:{int(bus, 16):02X}:{int(device, 16):02X}.{function}"


def parse_nvidia_smi(text: str) -> list[dict[str, str]]:
    """Rows of ``nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader``."""
    rows = []
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) < 4 or not fields[0].isdigit():
            continue
        rows.append(
            {
                "index": fields[0],
                "uuid": fields[1],
                "pci_bus_id": normalise_bus_id(fields[2]),
                "name": ",".join(fields[3:]).strip(),
            }
        )
    return rows


def parse_rocm_smi(text: str) -> list[dict[str, str]]:
    """Cards of ``rocm-smi --showuniqueid --showbus --json``."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    rows = []
    for card, fields in sorted(data.items()) if isinstance(data, dict) else ():
        match = re.fullmatch(r"card(\d+)", card)
        if match is None or not isinstance(fields, dict):
            continue
        uuid = next((v for k, v in fields.items() if k.lower().replace(" ", "") == "uniqueid"), None)
        bus = next((v for k, v in fields.items() if k.lower().replace(" ", "") in ("pcibus", "pcibusid")), None)
        rows.append({"index": match.group(1), "uuid": uuid, "pci_bus_id": normalise_bus_id(bus), "name": ""})
    return rows


def _smi_rows(is_hip: bool) -> list[dict[str, str]]:
    command = (
        ["rocm-smi", "--showuniqueid", "--showbus", "--json"]
        if is_hip
        else ["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,name", "--format=csv,noheader"]
    )
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return parse_rocm_smi(done.stdout) if is_hip else parse_nvidia_smi(done.stdout)


def match_smi_row(rows: list[dict[str, str]], *, uuid: str | None, bus_id: str | None) -> dict[str, str] | None:
    """The smi row of a device, found by what torch already knows about it (never by index:
    the smi tools ignore the visibility mask)."""
    for row in rows:
        if uuid and row.get("uuid") and row["uuid"].lower() == uuid.lower():
            return row
        if bus_id and row.get("pci_bus_id") and row["pci_bus_id"] == bus_id:
            return row
    return None


_IDENTITIES: dict[str, dict[str, Any]] = {}


def device_identity(device) -> dict[str, Any]:
    """:func:`gpu_identity` of a GPU device, asked once per process; ``{}`` for the CPU."""
    key = str(device)
    if key not in _IDENTITIES:
        _IDENTITIES[key] = gpu_identity(device) if getattr(device, "type", "cpu") == "cuda" else {}
    return _IDENTITIES[key]


def gpu_identity(device) -> dict[str, Any]:
    """Name, arch ('sm_90', 'gfx942'), physical UUID and PCI bus id of a GPU (an index, or a
    ``torch.device``/string such as "cuda:1"). Fields torch cannot tell come from nvidia-smi or
    rocm-smi; a field that nothing can tell is None. ``{"device": "cpu"}`` for the CPU."""
    import torch

    from .stack import gpu_arch

    device = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
    if device.type != "cuda":
        return {"device": str(device)}
    index = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    is_hip = getattr(torch.version, "hip", None) is not None
    identity = {
        "device": f"cuda:{index}",
        "index": index,
        "name": props.name,
        "arch": gpu_arch(props),
        "uuid": _normalise_uuid(getattr(props, "uuid", None), is_hip),
        "pci_bus_id": _bus_id_from_properties(props),
        "total_memory": int(props.total_memory),
        "multiprocessors": int(props.multi_processor_count),
    }
    if identity["uuid"] is None or identity["pci_bus_id"] is None:
        rows = _smi_rows(is_hip)
        row = match_smi_row(rows, uuid=identity["uuid"], bus_id=identity["pci_bus_id"])
        if row is None and len(rows) == 1 and torch.cuda.device_count() == 1:
            row = rows[0]  # one GPU on the host and one visible: they are the same device
        if row is not None:
            identity["uuid"] = identity["uuid"] or row.get("uuid")
            identity["pci_bus_id"] = identity["pci_bus_id"] or row.get("pci_bus_id")
    return identity


def native_fp8(arch: str | None) -> str:
    """The fp8 flavour a GPU's own fp8 instructions take: ``e4m3fnuz`` (bias 8, no negative
    zero) on AMD gfx940-gfx942 (MI300), ``e4m3fn`` on NVIDIA, AMD gfx950 (MI350/MI355X) and the
    CPU (``arch`` None)."""
    return "e4m3fnuz" if (arch or "").startswith("gfx94") else "e4m3fn"
