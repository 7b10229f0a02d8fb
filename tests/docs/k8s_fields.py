"""Check that every field of Kubernetes objects in a YAML stream is a real
one, of the right shape, with the required ones present: walks each object
along the API models of Debian's python3-kubernetes (the OpenAPI types),
then builds the models with the client's own deserializer, which refuses a
missing required field.

Usage: python3 k8s_fields.py FILE.yaml
"""
import sys

import kubernetes.client as k8s
import yaml

SCALARS = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def walk(value, typ, path, errors):
    if typ.startswith("list["):
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list ({typ})")
            return
        for i, v in enumerate(value):
            walk(v, typ[5:-1], f"{path}[{i}]", errors)
    elif typ.startswith("dict("):
        inner = typ[typ.index(",") + 1:-1].strip()
        if not isinstance(value, dict):
            errors.append(f"{path}: expected a mapping ({typ})")
            return
        for key, v in value.items():
            walk(v, inner, f"{path}.{key}", errors)
    elif typ in SCALARS:
        if not isinstance(value, SCALARS[typ]) or (typ == "int" and isinstance(value, bool)):
            errors.append(f"{path}: expected {typ}, got {value!r}")
    elif typ in ("object", "datetime"):
        pass  # IntOrString and the like
    else:
        cls = getattr(k8s, typ)
        if not isinstance(value, dict):
            errors.append(f"{path}: expected a {typ} mapping")
            return
        fields = {json: attr for attr, json in cls.attribute_map.items()}
        for key, v in value.items():
            if key not in fields:
                errors.append(f"{path}: {typ} has no field '{key}'")
            else:
                walk(v, cls.openapi_types[fields[key]], f"{path}.{key}", errors)


def main():
    errors = []
    api = k8s.ApiClient()
    with open(sys.argv[1]) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    if not docs:
        errors.append("no objects")
    for n, doc in enumerate(docs):
        version = doc.get("apiVersion", "")
        group = version.split("/")[-1].capitalize()
        typ = "V1" + doc.get("kind", "?") if group == "V1" else None
        if not typ or not hasattr(k8s, typ):
            errors.append(f"object {n}: unknown kind {version} {doc.get('kind')}")
            continue
        walk(doc, typ, f"{doc['kind']}", errors)
        try:
            api._ApiClient__deserialize(doc, typ)
        except (ValueError, TypeError) as e:
            errors.append(f"{doc['kind']}: {e}")
    for e in errors:
        print(e)
    print(f"k8s_fields: {len(docs)} objects, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
