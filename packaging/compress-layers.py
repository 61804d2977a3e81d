#!/usr/bin/env python3
"""Re-encodes the layers of an OCI layout's single image (build-image.sh, after umoci):

    packaging/compress-layers.py LAYOUT zstd|gzip

umoci writes its layers with Go's gzip at the default level. Each layer is decompressed, its digest
checked against the image config's diff_ids (the uncompressed content is unchanged, so the config
is too), and compressed again:
  zstd: `zstd -19 --long=27`, media type application/vnd.oci.image.layer.v1.tar+zstd (containerd >= 1.5,
        CRI-O, Docker >= 23; docs/image.md). A 128 MiB window (--long=27, the largest the zstd tool decodes
        without being told; containerd's and CRI-O's Go decoder accept more): the CNI plugin file's payload repeats the daemon runtime's libjvm.so and
        java.base classes within one layer, and long-range matching stores them once;
  gzip: `gzip -9n`, application/vnd.oci.image.layer.v1.tar+gzip, for runtimes without zstd.
Both are deterministic (zstd's output does not depend on its thread count), so the same layers give
the same digests. The manifest is rewritten and the index points at it (annotations kept); the old
blobs are removed.
"""
import hashlib
import json
import os
import subprocess
import sys

MEDIA = {
    "zstd": "application/vnd.oci.image.layer.v1.tar+zstd",
    "gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
}
COMPRESS = {
    "zstd": ["zstd", "-q", "-19", "--long=27", "-T0", "-c"],
    "gzip": ["gzip", "-9", "-n", "-c"],
}
DECOMPRESS = {
    "application/vnd.oci.image.layer.v1.tar+gzip": ["gzip", "-d", "-c"],
    "application/vnd.oci.image.layer.v1.tar+zstd": ["zstd", "-q", "-d", "--long=27", "-c"],
}


def main(layout: str, fmt: str) -> None:
    if fmt not in MEDIA:
        sys.exit(f"compress-layers: format must be zstd or gzip, got \"{fmt}\"")
    blobs = os.path.join(layout, "blobs", "sha256")

    def path(digest: str) -> str:
        algo, _, hexd = digest.partition(":")
        if algo != "sha256":
            sys.exit(f"compress-layers: digest {digest}: only sha256 is supported")
        return os.path.join(blobs, hexd)

    def put(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        with open(os.path.join(blobs, digest), "wb") as f:
            f.write(data)
        return "sha256:" + digest

    index_path = os.path.join(layout, "index.json")
    with open(index_path) as f:
        index = json.load(f)
    if len(index["manifests"]) != 1:
        sys.exit(f"compress-layers: {index_path}: expected one manifest, found {len(index['manifests'])}")
    entry = index["manifests"][0]
    with open(path(entry["digest"])) as f:
        manifest = json.load(f)
    with open(path(manifest["config"]["digest"])) as f:
        diff_ids = json.load(f)["rootfs"]["diff_ids"]
    if len(diff_ids) != len(manifest["layers"]):
        sys.exit(f"compress-layers: {len(manifest['layers'])} layers but {len(diff_ids)} diff_ids")
    old = [entry["digest"]]
    for layer, diff_id in zip(manifest["layers"], diff_ids):
        media = layer["mediaType"]
        if media not in DECOMPRESS:
            sys.exit(f"compress-layers: layer {layer['digest']}: mediaType {media} not supported")
        with open(path(layer["digest"]), "rb") as f:
            raw = subprocess.run(DECOMPRESS[media], stdin=f, check=True, stdout=subprocess.PIPE).stdout
        if "sha256:" + hashlib.sha256(raw).hexdigest() != diff_id:
            sys.exit(f"compress-layers: layer {layer['digest']}: content does not match diff_id {diff_id}")
        data = subprocess.run(COMPRESS[fmt], input=raw, check=True, stdout=subprocess.PIPE).stdout
        old.append(layer["digest"])
        layer["mediaType"], layer["digest"], layer["size"] = MEDIA[fmt], put(data), len(data)
        print(f"compress-layers: {diff_id[7:19]} {len(raw)} -> {len(data)} bytes ({fmt})", file=sys.stderr)
    body = json.dumps(manifest, separators=(",", ":")).encode()
    entry["digest"], entry["size"] = put(body), len(body)
    with open(index_path, "w") as f:
        json.dump(index, f, separators=(",", ":"))
    live = {entry["digest"], manifest["config"]["digest"], *(l["digest"] for l in manifest["layers"])}
    for digest in old:
        if digest not in live and os.path.exists(path(digest)):
            os.remove(path(digest))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: compress-layers.py LAYOUT zstd|gzip")
    main(sys.argv[1], sys.argv[2])
