"""schemathesis hooks for .ci/schemathesis.sh: how to read the media types the negotiate
middleware produces besides JSON, so their bodies are checked against the document too."""

import json

import schemathesis


@schemathesis.deserializer("application/octet-stream")
def json_bytes(_ctx, response):
    # negotiate.rs: octet-stream carries the JSON bytes unchanged.
    return json.loads(response.content)


@schemathesis.deserializer("text/csv")
def csv_text(_ctx, response):
    # The document declares CSV as a string; its columns are the record's fields.
    return response.content.decode("utf-8")
