"""A PEP 517 build backend of standard library only, so that
`pip install clients/python` needs no download (not even setuptools or
wheel): it zips the matchpoint package into a pure-Python wheel."""

import base64
import hashlib
import os
import tarfile
import zipfile

NAME, VERSION = "matchpoint", "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST_INFO = f"{NAME}-{VERSION}.dist-info"
TAG = "py3-none-any"


def _metadata() -> str:
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: Client library of the Matchpoint API (standard library only)\n"
            "Requires-Python: >=3.9\nDescription-Content-Type: text/markdown\n\n" + readme)


def _package_files():
    root = os.path.join(HERE, NAME)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for fn in sorted(filenames):
            if fn.endswith((".py", ".typed")):
                full = os.path.join(dirpath, fn)
                yield full, os.path.relpath(full, HERE).replace(os.sep, "/")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return DIST_INFO


def _wheel_file() -> str:
    return f"Wheel-Version: 1.0\nGenerator: matchpoint_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"


def _write_wheel(wheel_directory, entries):
    name = f"{NAME}-{VERSION}-{TAG}.whl"
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in entries:
            z.writestr(arcname, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arcname},sha256={digest},{len(data)}")
        record.append(f"{DIST_INFO}/RECORD,,")
        z.writestr(f"{DIST_INFO}/RECORD", "\n".join(record) + "\n")
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    for full, rel in _package_files():
        with open(full, "rb") as f:
            entries.append((rel, f.read()))
    entries.append((f"{DIST_INFO}/METADATA", _metadata().encode()))
    entries.append((f"{DIST_INFO}/WHEEL", _wheel_file().encode()))
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file pointing at the source folder.
    entries = [(f"{NAME}.pth", (HERE + "\n").encode()),
               (f"{DIST_INFO}/METADATA", _metadata().encode()),
               (f"{DIST_INFO}/WHEEL", _wheel_file().encode())]
    return _write_wheel(wheel_directory, entries)


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/matchpoint_build.py"]:
            t.add(os.path.join(HERE, rel), f"{base}/{rel}")
        for full, rel in _package_files():
            t.add(full, f"{base}/{rel}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return name
