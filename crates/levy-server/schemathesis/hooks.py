"""schemathesis hooks for levy's CI (run.sh beside this file).

Every POST of the interface takes an `Idempotency-Key`, and the interface's rule is one
key per request: the first answer under a key is kept 24 hours and given again, unchanged,
for the same request, and a key used with another request is 409 IDEMPOTENCY_KEY_REUSED.
The generator sends the same few short keys (`0`) with many requests, as no client that
follows the rule does: a create sent again under a key used before answers the record made
then, which the run may have deleted since (a "created resource not found"), and a key
seen with another body is a 409. So a positive case's well-formed key is made the
request's own here: it starts with this run's own id, a number of its own and a dot (no
such start is another's start, and run.sh runs schemathesis several times against one
ledger), and keeps the generated length and characters after it (so the longest key, 255
characters, is still sent); a malformed one (the negative
tests: too long, a space, a character outside visible ASCII) is sent as generated, to be
refused with 400 INVALID_HEADER. The keys' own rules are tested in
crates/levy-api/tests/idempotency.rs and crates/levy-server/tests/idempotency.rs.
"""

import itertools
import re
import uuid

import schemathesis

WELL_FORMED = re.compile(r"^[!-~]{1,255}$")
RUN = uuid.uuid4().hex[:12]
NEXT = itertools.count()


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    # Negative cases are left as generated: changing one makes schemathesis check it again
    # as a positive case (and send the header it had left out, `Authorization` among
    # them), and a key a negative case reuses meets a refusal, which keeps nothing.
    meta = case.meta
    if meta is None or meta.generation.mode.is_negative:
        return
    headers = case.headers or {}
    for name in list(headers):
        key = headers[name]
        if name.lower() == "idempotency-key" and isinstance(key, str) and WELL_FORMED.match(key):
            own = f"{RUN}-{next(NEXT)}."
            headers[name] = own + key[len(own):]
