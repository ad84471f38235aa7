"""Validate a Croissant file with mlcroissant and read every record back (run with the kit's
interpreter: ``.venv-kits/mlcroissant/bin/python croissant_load.py <croissant.json>``).

Prints JSON: the validation errors and warnings mlcroissant reports, the ``datePublished`` it
read (ISO), the encoding formats of every file object and file set as mlcroissant holds them
(one entry per node it keeps: two objects under one ``@id`` become one, their formats merged),
and per record set the number of records, their ids, and the sha256 of the pixels of every
image of the first record (mlcroissant decodes ``sc:ImageObject`` fields to PIL images).
"""

import hashlib
import json
import sys

import mlcroissant as mlc


def _id(value):
    return value.decode() if isinstance(value, bytes) else value


def main(path: str) -> None:
    dataset = mlc.Dataset(jsonld=path)
    issues = dataset.metadata.ctx.issues
    published = dataset.metadata.date_published
    out = {"errors": sorted(issues.errors), "warnings": sorted(issues.warnings),
           "date_published": published.isoformat() if published else None,
           "distribution": [[d.uuid, d.encoding_formats] for d in dataset.metadata.distribution],
           "record_sets": {}}
    for record_set in dataset.metadata.record_sets:
        rid = record_set.uuid
        ids, images = [], []
        for record in dataset.records(record_set=rid):
            ids.append(_id(record[f"{rid}/id"]))
            if len(ids) == 1:
                for key, value in record.items():
                    values = value if isinstance(value, list) else [value]
                    images += [[key, hashlib.sha256(v.convert("RGB").tobytes()).hexdigest()]
                               for v in values if hasattr(v, "convert")]
        out["record_sets"][rid] = {"count": len(ids), "ids": ids, "first_images": images}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
