#!/usr/bin/env python3
"""Renders a kustomization of deploy/kubernetes as `kubectl kustomize` would, and validates the
result against the Kubernetes API schemas with the `kubernetes-validate` package (strict: an
unknown field is an error). Run by scripts/test.sh with the test virtualenv's Python.

  render-kubernetes.py DIR...        validate each kustomization DIR (and what it includes)
  render-kubernetes.py --print DIR   print DIR's rendered stream instead

Only what deploy/kubernetes uses is rendered: `resources` (files, and folders holding a
kustomization) and `images` (`newName`, `newTag`, `digest`); any other key is refused, so the
kustomizations stay within what this renders the same as kustomize. No cluster, kubectl or
network is needed.

A resource whose kind the schemas do not know (a CRD's: the Prometheus Operator's
ServiceMonitor) is checked against the few fields this file knows it must have instead.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import yaml

KNOWN_KEYS = {"apiVersion", "kind", "resources", "images"}
IMAGE_KEYS = {"name", "newName", "newTag", "digest"}


def render(folder: Path, seen: tuple[Path, ...] = ()) -> list[dict]:
    folder = folder.resolve()
    if folder in seen:
        sys.exit(f"{folder}: a kustomization includes itself")
    path = folder / "kustomization.yaml"
    kustomization = yaml.safe_load(path.read_text())
    unknown = set(kustomization) - KNOWN_KEYS
    if unknown:
        sys.exit(f"{path}: keys this renderer does not apply: {sorted(unknown)}")
    if kustomization.get("kind") != "Kustomization":
        sys.exit(f"{path}: kind is not Kustomization")
    documents: list[dict] = []
    for resource in kustomization.get("resources", []):
        target = folder / resource
        if target.is_dir() and target.resolve() in folder.parents:
            sys.exit(f"{path}: {resource} holds this kustomization (kustomize refuses the cycle)")
        if target.is_dir():
            documents.extend(render(target, (*seen, folder)))
        else:
            documents.extend(document for document in yaml.safe_load_all(target.read_text()) if document)
    for image in kustomization.get("images", []):
        unknown = set(image) - IMAGE_KEYS
        if unknown:
            sys.exit(f"{path}: image keys this renderer does not apply: {sorted(unknown)}")
        for document in documents:
            for container in containers(document):
                apply_image(container, image)
    return documents


def containers(document: dict) -> list[dict]:
    spec = document.get("spec", {}).get("template", {}).get("spec", {})
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def apply_image(container: dict, image: dict) -> None:
    """kustomize's image transformer: a container whose image is `name` (with any tag or
    digest) gets the new name, tag or digest."""
    current = container.get("image", "")
    name = current.split("@", 1)[0]
    tag = ""
    if ":" in name.rsplit("/", 1)[-1]:
        name, tag = name.rsplit(":", 1)
    if name != image["name"]:
        return
    name = image.get("newName", name)
    if "digest" in image:
        container["image"] = f"{name}@{image['digest']}"
    else:
        tag = image.get("newTag", tag)
        container["image"] = f"{name}:{tag}" if tag else name


def check_service_monitor(document: dict) -> list[str]:
    problems = []
    if document.get("apiVersion") != "monitoring.coreos.com/v1":
        problems.append("apiVersion is not monitoring.coreos.com/v1")
    spec = document.get("spec", {})
    if not spec.get("selector", {}).get("matchLabels"):
        problems.append("spec.selector.matchLabels is missing")
    endpoints = spec.get("endpoints") or []
    if not endpoints or not all(endpoint.get("port") for endpoint in endpoints):
        problems.append("each of spec.endpoints needs a named port")
    return problems


def validate(documents: list[dict], label: str) -> bool:
    from kubernetes_validate import utils

    ok = True
    services = {
        document["metadata"]["name"]: document for document in documents if document.get("kind") == "Service"
    }
    for document in documents:
        kind, name = document.get("kind"), document.get("metadata", {}).get("name")
        where = f"{label}: {kind}/{name}"
        if kind == "ServiceMonitor":
            problems = check_service_monitor(document)
            ports = {
                port.get("name")
                for service in services.values()
                for port in service.get("spec", {}).get("ports", [])
            }
            for endpoint in document.get("spec", {}).get("endpoints", []):
                if endpoint.get("port") not in ports:
                    problems.append(f"no Service port named {endpoint.get('port')!r}")
        else:
            try:
                utils.validate(document, utils.latest_version(), strict=True)
                problems = []
            except utils.ValidationError as error:
                place = ".".join(str(part) for part in error.path) or "(the resource)"
                problems = [f"{place}: {error.message}"]
            except (utils.SchemaNotFoundError, utils.InvalidSchemaError, utils.VersionNotSupportedError) as error:
                problems = [error.message]
        if problems:
            ok = False
            for problem in problems:
                print(f"{where}: {problem}", file=sys.stderr)
        else:
            print(f"{where}: valid")
    return ok


def main(arguments: list[str]) -> int:
    if arguments[:1] == ["--print"]:
        for folder in arguments[1:]:
            sys.stdout.write(yaml.safe_dump_all(render(Path(folder)), sort_keys=False))
        return 0
    if not arguments:
        sys.exit(__doc__)
    ok = True
    for folder in arguments:
        ok = validate(render(Path(folder)), folder) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
