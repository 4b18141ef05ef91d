"""
What a client does that JSON Schema cannot say, taught to schemathesis (openapi-schemathesis.test.ts).
Each rule here is one the server keeps and /openapi.json states in words; the patterns, formats and
conditionals JSON Schema can say are in the document itself.
- A CNPJ (`format: cnpj`) has check digits that match (shared/cnpj.ts's arithmetic); a partner's
  document (`format: partner-document`) is such a CNPJ or a CPF.
- An `Idempotency-Key` is a new value per request (the same key with another request is 422 by design).
- A `cursor` is one a previous page gave (any other is 400 `invalid_cursor` by design): a generated
  one is left out, the first page.
- The company filters: a name searched by word has a word of two letters or digits that is not a
  stop word; `capitalMin` is not above `capitalMax`, nor `openingDateMin` after `openingDateMax`;
  `location` names no other state or city than `state` and `city` (here: it is left out beside them).
- A job's items have distinct ids; a webhook's URL is an https address that resolves to a public
  one (here: the webhook is left out, so no test run posts to the internet).
Only values the schema accepts are changed, so a case meant to break the schema still does.
"""
import re
import unicodedata
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

cpfs = st.text("0123456789", min_size=11, max_size=11)
masked_cpfs = st.text("0123456789", min_size=6, max_size=6).map(lambda middle: f"***{middle}**")
schemathesis.openapi.format("partner-document", st.one_of(cpfs, masked_cpfs, cnpjs))

KEY = re.compile(r"[\x21-\x7e]{1,255}")

# server/lib/text.ts: words of folded text, one-letter words and these left out.
STOP_WORDS = {"de", "da", "do", "das", "dos", "e", "em", "a", "o", "the", "of", "and"}
COMPANY_FILTERS = {"/api/companies/search", "/api/companies/search/stream", "/api/companies/export"}


def fold(text: str) -> str:
    unaccented = re.sub(r"[\u0300-\u036f]", "", unicodedata.normalize("NFD", text))
    return re.sub(r"[^a-z0-9]+", " ", unaccented.lower()).strip()


def has_word(text: str) -> bool:
    return any(len(word) > 1 and word not in STOP_WORDS for word in fold(text).split(" "))


def is_text(value, max_length: int) -> bool:
    return isinstance(value, str) and len(value) <= max_length and "\x00" not in value


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def company_filters(body: dict) -> None:
    for field in ("name", "partnerName"):
        if is_text(body.get(field), 200) and fold(body[field]) and not has_word(body[field]):
            body[field] = "padaria"
    low, high = body.get("capitalMin"), body.get("capitalMax")
    if is_number(low) and is_number(high) and low > high:
        body["capitalMin"], body["capitalMax"] = high, low
    low, high = body.get("openingDateMin"), body.get("openingDateMax")
    if isinstance(low, str) and isinstance(high, str) and low > high:
        body["openingDateMin"], body["openingDateMax"] = high, low
    # Only a location the schema accepts (a letter or digit folding keeps), so a case meant to break it still does.
    if is_text(body.get("location"), 200) and fold(body["location"]) and ("state" in body or "city" in body):
        del body["location"]


def valid_webhook(webhook) -> bool:
    if not isinstance(webhook, dict) or not set(webhook) <= {"url", "secret", "events"}:
        return False
    url, secret, events = webhook.get("url"), webhook.get("secret"), webhook.get("events", ["job.finished"])
    return (
        is_text(url, 2048) and len(url) >= 1
        and is_text(secret, 256) and len(secret) >= 16
        and isinstance(events, list) and 1 <= len(events) <= 2 and len(set(map(str, events))) == len(events)
        and all(event in ("job.finished", "job.item") for event in events)
    )


def job_items(body: dict) -> None:
    items = body.get("items")
    if not isinstance(items, list):
        return
    seen = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        item_id = item.get("itemId", str(index))
        if not is_text(item_id, 64) or not item_id:
            continue
        if item_id in seen:
            # A fresh id, within the 64 characters an id may have.
            item_id = str(uuid.uuid4())
            item["itemId"] = item_id
        seen.add(item_id)


@schemathesis.hook
def map_case(context, case):
    # Every phase's cases pass here (the coverage phase's included, which map_headers would miss).
    headers = case.headers
    if headers and isinstance(headers.get("Idempotency-Key"), str) and KEY.fullmatch(headers["Idempotency-Key"]):
        headers["Idempotency-Key"] = str(uuid.uuid4())
    if isinstance(case.body, dict) and isinstance(case.body.get("cursor"), str) and "\x00" not in case.body["cursor"]:
        case.body["cursor"] = None
    if case.query and is_text(case.query.get("cursor"), 200) and case.query["cursor"]:
        del case.query["cursor"]
    path = case.operation.path
    if isinstance(case.body, dict):
        if path in COMPANY_FILTERS:
            company_filters(case.body)
        if path in ("/api/jobs", "/api/companies/export") and valid_webhook(case.body.get("webhook")):
            del case.body["webhook"]
        if path == "/api/jobs":
            job_items(case.body)
    return case
