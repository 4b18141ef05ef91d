"""
What a client does that JSON Schema cannot say, taught to schemathesis (openapi-schemathesis.test.ts):
- a CNPJ (`format: cnpj`) has check digits that match (shared/cnpj.ts's arithmetic);
- an `Idempotency-Key` is a new value per request (the same key with another request is 422 by design);
- a search `cursor` is one a previous page gave (any other is 400 `invalid_cursor` by design): a
  generated one is sent as null, the first page.
Only values the schema accepts are changed, so a case meant to break the schema still does.
"""
import re
import uuid

import schemathesis
from hypothesis import strategies as st

ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def check_digit(chars: str) -> int:
    total = sum((ord(c) - 48) * (((len(chars) - 1 - i) % 8) + 2) for i, c in enumerate(chars))
    rest = total % 11
    return 0 if rest < 2 else 11 - rest


def with_check_digits(first12: str) -> str:
    dv1 = check_digit(first12)
    dv2 = check_digit(first12 + str(dv1))
    return f"{first12}{dv1}{dv2}"


def punctuated(cnpj: str) -> str:
    return f"{cnpj[:2]}.{cnpj[2:5]}.{cnpj[5:8]}/{cnpj[8:12]}-{cnpj[12:]}"


cnpjs = (
    st.text(ALPHANUMERIC, min_size=12, max_size=12)
    .map(with_check_digits)
    .filter(lambda cnpj: not re.fullmatch(r"(\d)\1{13}", cnpj))
    .flatmap(lambda cnpj: st.sampled_from([cnpj, punctuated(cnpj)]))
)
schemathesis.openapi.format("cnpj", cnpjs)

KEY = re.compile(r"[\x21-\x7e]{1,255}")


@schemathesis.hook
def map_case(context, case):
    # Every phase's cases pass here (the coverage phase's included, which map_headers would miss).
    headers = case.headers
    if headers and isinstance(headers.get("Idempotency-Key"), str) and KEY.fullmatch(headers["Idempotency-Key"]):
        headers["Idempotency-Key"] = str(uuid.uuid4())
    if isinstance(case.body, dict) and isinstance(case.body.get("cursor"), str) and "\x00" not in case.body["cursor"]:
        case.body["cursor"] = None
    return case
