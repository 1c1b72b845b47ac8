"""Bad input never crashes or changes a node: a clear 4xx every time."""

import json

import pytest


U = "{u}"

cases = [
    ("POST", "/v1/nodes", None, b"not json"),
    ("POST", "/v1/nodes", [1, 2], None),
    ("POST", "/v1/nodes", {"driver": "nope"}, None),
    (
        "POST",
        "/v1/nodes",
        {"driver": "fake-hardware", "driver_info": "str"},
        None,
    ),
    (
        "POST",
        "/v1/nodes",
        {"driver": "fake-hardware", "power_interface": "ipmi"},
        None,
    ),
    ("POST", "/v1/nodes", {"driver": "fake-hardware", "uuid": "abc"}, None),
    ("POST", "/v1/nodes", {"driver": "fake-hardware", "foo": 1}, None),
    (
        "POST",
        "/v1/nodes",
        {"driver": "fake-hardware", "name": "bad name!"},
        None,
    ),
    (
        "POST",
        "/v1/nodes",
        {"driver": "fake-hardware", "maintenance": "maybe"},
        None,
    ),
    ("GET", "/v1/nodes?limit=abc", None, None),
    ("GET", "/v1/nodes?limit=-1", None, None),
    ("GET", "/v1/nodes?sort_key=driver_info", None, None),
    ("GET", "/v1/nodes?sort_dir=up", None, None),
    ("GET", "/v1/nodes?marker=nonexistent", None, None),
    ("GET", "/v1/nodes?fields=bogus", None, None),
    ("GET", "/v1/nodes?maintenance=maybe", None, None),
    ("GET", "/v1/nodes?detail=true&fields=uuid", None, None),
    ("GET", "/v1/nodes/%s?fields=uuid,,name" % U, None, None),
    ("PATCH", "/v1/nodes/" + U, {"op": "replace"}, None),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "replace", "path": "/provision_state", "value": "active"}],
        None,
    ),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "replace", "path": "/nope", "value": 1}],
        None,
    ),
    ("PATCH", "/v1/nodes/" + U, [{"op": "remove", "path": "/driver"}], None),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "remove", "path": "/extra/missing"}],
        None,
    ),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "replace", "path": "/driver", "value": "nope"}],
        None,
    ),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "replace", "path": "/instance_uuid", "value": "x"}],
        None,
    ),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "replace", "path": "/properties", "value": [1]}],
        None,
    ),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "move", "from": "/extra", "path": "/properties"}],
        None,
    ),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "add", "path": "/extra/a/b", "value": 1}],
        None,
    ),
    (
        "PATCH",
        "/v1/nodes/" + U,
        [{"op": "replace", "path": "/conductor_group", "value": "bad group"}],
        None,
    ),
    ("PUT", "/v1/nodes/%s/states/provision" % U, {"target": "fly"}, None),
    ("PUT", "/v1/nodes/%s/states/provision" % U, {"target": "active"}, None),
    ("PUT", "/v1/nodes/%s/states/provision" % U, {}, None),
    ("PUT", "/v1/nodes/%s/states/provision" % U, "str", None),
    (
        "PUT",
        "/v1/nodes/%s/states/provision" % U,
        {"target": "clean", "clean_steps": "x"},
        None,
    ),
    (
        "PUT",
        "/v1/nodes/%s/states/provision" % U,
        {"target": "manage", "clean_steps": []},
        None,
    ),
    ("PUT", "/v1/nodes/%s/states/power" % U, {"target": "on"}, None),
    (
        "PUT",
        "/v1/nodes/%s/states/power" % U,
        {"target": "power on", "timeout": -1},
        None,
    ),
    (
        "PUT",
        "/v1/nodes/%s/states/power" % U,
        {"target": "power on", "timeout": "x"},
        None,
    ),
    ("PUT", "/v1/nodes/%s/states/raid" % U, {"logical_disks": "x"}, None),
    (
        "PUT",
        "/v1/nodes/%s/management/boot_device" % U,
        {"boot_device": "floppy"},
        None,
    ),
    # bodies that are JSON but not objects (found by the fuzz test: a
    # list here was a 500)
    ("PUT", "/v1/nodes/%s/management/boot_device" % U, ["pxe"], None),
    ("POST", "/v1/heartbeat/%s" % U, ["x"], None),
    ("PUT", "/v1/nodes/%s/traits" % U, {"traits": ["lower"]}, None),
    ("PUT", "/v1/nodes/%s/traits" % U, {"traits": "x"}, None),
    ("POST", "/v1/nodes/%s/vifs" % U, {"id": 5}, None),
    ("GET", "/v1/nodes/%s/cleaning/steps?min_priority=x" % U, None, None),
    ("POST", "/v1/ports", {"address": "zz", "node_uuid": U}, None),
    (
        "POST",
        "/v1/ports",
        {"address": "52:54:00:00:00:01", "node_uuid": "nonode"},
        None,
    ),
    ("POST", "/v1/ports", {"address": "52:54:00:00:00:01"}, None),
    ("GET", "/v1/ports?node=nonode", None, None),
    ("POST", "/v1/chassis", {"description": 5}, None),
    ("GET", "/v1/drivers/nope", None, None),
    ("GET", "/v1/conductors/nope", None, None),
    ("GET", "/v1/nope", None, None),
    ("DELETE", "/v1/nodes", None, None),
    ("GET", "/v1/heartbeat/%s" % U, None, None),
    ("POST", "/v1/heartbeat/%s" % U, {"callback_url": 1}, None),
    ("GET", "/v1/lookup", None, None),
    ("GET", "/v1/nodes/%s/vendor_passthru?method=nope" % U, None, None),
    ("PUT", "/v1/nodes/%s/states/console" % U, {"enabled": "maybe"}, None),
]


ALLOWED = {
    ("GET", "/v1/nodes/%s?fields=uuid,,name" % U),
}


@pytest.mark.parametrize("method,path,body,raw", cases)
def test_bad_input_is_a_clear_4xx_and_the_node_is_untouched(
    api, method, path, body, raw
):
    n = api.create_node(name="x", extra={"keep": 1})
    before = api.node(n["uuid"])
    if body is not None:
        body = json.loads(json.dumps(body).replace("{u}", n["uuid"]))
    status, resp, headers = api.request(
        method, path.replace("{u}", n["uuid"]), body, raw=raw
    )
    if (method, path) in ALLOWED:
        return
    assert 400 <= status < 500, (status, resp)
    assert headers["Content-Type"].startswith("application/json")
    fault = json.loads(resp["error_message"])
    if "code" in fault:
        # routing and version errors: Ironic's plain HTTP error body
        assert fault["code"] == status and fault["title"]
    else:
        assert fault["faultstring"]
        assert "Traceback" not in fault["faultstring"]
    after = api.node(n["uuid"])
    assert after == before


def _nested(kind: str, depth: int) -> bytes:
    """A JSON value ``depth`` containers deep."""
    if kind == "array":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


def _patch(value_depth: int) -> bytes:
    """A JSON patch whose value is ``value_depth`` deep (the patch itself
    adds two levels: the list and the operation)."""
    value = _nested("object", value_depth).decode()
    return ('[{"op": "add", "path": "/extra/deep", "value": %s}]'
            % value).encode()


@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize("depth", [26, 5000])
def test_json_nested_too_deep_is_400_naming_the_limit(api, kind, depth):
    n = api.create_node(name="deep", extra={"keep": 1})
    before = api.node(n["uuid"])
    for method, path, raw in (
        ("POST", "/v1/nodes", _nested(kind, depth)),
        ("PATCH", "/v1/nodes/%s" % n["uuid"], _patch(depth - 2)),
        ("POST", "/v1/heartbeat/%s" % n["uuid"], _nested(kind, depth)),
    ):
        status, resp, _ = api.request(method, path, raw=raw)
        assert status == 400, (method, path, status, resp)
        fault = json.loads(resp["error_message"])
        assert "nested deeper than 25 levels" in fault["faultstring"]
        assert "max_json_body_depth" in fault["faultstring"]
    assert api.node(n["uuid"]) == before


def test_json_exactly_at_the_depth_limit_is_accepted(api):
    n = api.create_node(name="deep")
    status, resp, _ = api.request(
        "PATCH", "/v1/nodes/%s" % n["uuid"], raw=_patch(23))
    assert status == 200, resp
    value = api.node(n["uuid"])["extra"]["deep"]
    for _ in range(22):
        value = value["a"]
    assert value == {}


def test_max_json_body_depth_is_an_option(tmp_path):
    from tests import harness
    h = harness.Harness(tmp_path, overrides={"api.max_json_body_depth": 3})
    try:
        status, resp, _ = h.request(
            "POST", "/v1/nodes", raw=b'{"driver": "fake-hardware", '
            b'"extra": {"a": {"b": {"c": 1}}}}')
        assert status == 400, resp
        assert "deeper than 3 levels" in resp["error_message"]
        status, resp, _ = h.request(
            "POST", "/v1/nodes", raw=b'{"driver": "fake-hardware", '
            b'"extra": {"a": {"b": 1}}}')
        assert status == 201, resp
    finally:
        h.close()


@pytest.mark.parametrize("method,path,body", [
    ("PUT", "/v1/nodes/{u}/management/indicators/led@system", [1]),
    ("PUT", "/v1/nodes/{u}/states/boot_mode", []),
    ("PUT", "/v1/nodes/{u}/states/provision", ["service"]),
    ("POST", "/v1/nodes/{u}/vmedia", "cdrom"),
    ("POST", "/v1/runbooks", []),
    ("POST", "/v1/continue_inspection", [1]),
])
def test_bodies_that_are_not_objects_are_400_at_the_newest_version(
        api, method, path, body):
    n = api.create_node(name="x")
    before = api.node(n["uuid"])
    status, resp, _ = api.request(method, path.replace("{u}", n["uuid"]),
                                  body, version="1.95")
    assert status == 400, (status, resp)
    assert api.node(n["uuid"]) == before


@pytest.mark.parametrize("body,says", [
    ("x", "the request body must be a JSON object"),
    ([1, 2], "the request body must be a JSON object"),
    (True, "the request body must be a JSON object"),
    ({"task": 1}, "multiple values for argument 'task'"),
])
def test_vendor_passthru_arguments_a_method_cannot_take_are_400(
        api, body, says):
    """A vendor method's keyword arguments are the body's keys: a body
    that is not an object, or a key the method cannot take, is the
    caller's mistake (Ironic 39 answers both 500)."""
    n = api.create_node(name="vendor")
    before = api.node(n["uuid"])
    path = "/v1/nodes/%s/vendor_passthru/first_method" % n["uuid"]
    status, resp, _ = api.request("POST", path, body)
    assert status == 400, (status, resp)
    assert says in json.loads(resp["error_message"])["faultstring"]
    assert api.node(n["uuid"]) == before
    # what the method takes still reaches it, and no body is no argument
    status, resp, _ = api.request("POST", path, {"a": [1]})
    assert status == 200 and resp["args"] == {"a": [1]}, resp
    status, resp, _ = api.request("POST", path)
    assert status == 200 and resp["args"] == {}, resp


@pytest.mark.parametrize("path,part,at", [
    ("/v1/nodes?name=%ff", "query string", 5),
    ("/v1/nodes?%ff=1", "query string", 0),
    ("/v1/nodes?fields=uuid,%c3", "query string", 12),
    ("/v1/ports?address=%e2%82", "query string", 8),
    ("/v1/nodes/%ff", "path", 10),
    ("/v1/nodes/abc%ff/states", "path", 13),
])
def test_a_url_that_is_not_utf8_is_a_400_saying_so(api, path, part, at):
    """Ironic answers such a URL 400 with its plain error body; here the
    description says what was wrong (it was a 500 here before)."""
    status, out, _ = api.request("GET", path)
    assert status == 400, out
    error = json.loads(out["error_message"])
    assert error["code"] == 400 and error["title"] == "Bad Request"
    assert error["description"].startswith(
        "The request URL's %s is not valid UTF-8 once percent-decoded"
        % part), error
    assert "at %d)" % at in error["description"], error


def test_a_url_in_utf8_is_read_as_such(api):
    node = api.create_node(name="utf8-url", description="caf\u00e9")
    # percent-encoded and raw (a server hands raw bytes over as latin-1)
    for query in ("description_contains=caf%C3%A9",
                  "description_contains=caf\u00c3\u00a9"):
        status, out, _ = api.request("GET", "/v1/nodes?" + query,
                                     version="1.61")
        assert status == 200, out
        assert [n["uuid"] for n in out["nodes"]] == [node["uuid"]]


@pytest.mark.parametrize("raw,says", [
    (b'{"driver": "fake-hardware", "extra": {"a": NaN}}',
     "NaN is not a JSON value"),
    (b'{"driver": "fake-hardware", "extra": {"a": -Infinity}}',
     "-Infinity is not a JSON value"),
    (b'{"driver": "fake-hardware", "extra": {"a": 1e999}}', "infinity"),
    (b'{"driver": "fake-hardware", "extra": {"a": "\\ud800"}}',
     "surrogate"),
    (b'{"driver": "fake-hardware", "extra": {"\\udc00x": 1}}', "surrogate"),
    (b'{"driver": "fake-hardware", "description": "\\ud83d"}', "surrogate"),
    (b'{"driver": "fake-hardware", "extra": {"a": 18446744073709551616}}',
     "the integer 18446744073709551616 is beyond 64 bits"),
    (b'{"driver": "fake-hardware", "extra": {"a": [-9223372036854775809]}}',
     "the integer -9223372036854775809 is beyond 64 bits"),
])
def test_json_the_service_cannot_keep_is_400(api, raw, says):
    """Not JSON as RFC 8259 has it (NaN, Infinity, a lone UTF-16
    surrogate) or an integer beyond 64 bits: Python's parser took them
    and they failed when stored (500) or were stored changed (NaN as
    null)."""
    status, resp, _ = api.request("POST", "/v1/nodes", raw=raw)
    assert status == 400, (status, resp)
    fault = json.loads(resp["error_message"])["faultstring"]
    assert "the request body is not valid JSON: " in fault, fault
    assert says in fault, fault
    # the same in a PATCH's value, and the node stays as it was
    n = api.create_node(name="kept", extra={"keep": 1})
    before = api.node(n["uuid"])
    value = raw.split(b'"extra": ')[-1].split(b'"description": ')[-1][:-1]
    status, resp, _ = api.request(
        "PATCH", "/v1/nodes/%s" % n["uuid"],
        raw=b'[{"op": "add", "path": "/extra/b", "value": %s}]' % value)
    assert status == 400, (status, resp)
    assert api.node(n["uuid"]) == before


def test_json_at_the_edges_of_what_is_kept_reads_back_the_same(any_db_api):
    """Integers at the ends of 64 bits, a surrogate pair, long digit runs
    in strings and floats: stored and shown back exactly, in the node,
    in a list the database writes and after a PATCH."""
    api = any_db_api
    extra = {"max": 18446744073709551615, "min": -9223372036854775808,
             "pair": "\U0001f600", "digits": "1234567890123456789012345",
             "float": 0.1234567890123456789, "big": 1.5e300}
    raw = json.dumps({"driver": "fake-hardware", "name": "edges",
                      "extra": extra}).encode()
    status, node, _ = api.request("POST", "/v1/nodes", raw=raw)
    assert status == 201, node
    assert node["extra"] == extra
    assert api.node("edges")["extra"] == extra
    status, page, _ = api.request("GET", "/v1/nodes?fields=extra,name")
    assert [n["extra"] for n in page["nodes"]] == [extra]
    status, node, _ = api.request(
        "PATCH", "/v1/nodes/edges",
        raw=b'[{"op": "add", "path": "/extra/more", '
            b'"value": 18446744073709551615}]')
    assert status == 200, node
    assert node["extra"]["more"] == 18446744073709551615


@pytest.mark.parametrize("field,value,status,shown", [
    ("console_enabled", "x", 400, None),
    ("console_enabled", "yes", 201, True),
    ("console_enabled", None, 201, False),
    ("secure_boot", "x", 400, None),
    ("secure_boot", True, 201, True),
    ("secure_boot", None, 201, None),
])
def test_a_new_nodes_console_and_secure_boot_are_booleans(
        api, field, value, status, shown):
    """Ironic 39 takes both on create (console_enabled as a strict
    boolean string, null a 500 there); here a string that is no boolean
    is a 400 for both (it was a 500, null for console_enabled too)."""
    got, resp, _ = api.request(
        "POST", "/v1/nodes", {"driver": "fake-hardware", field: value},
        version="1.95")
    assert got == status, resp
    if status == 400:
        fault = json.loads(resp["error_message"])["faultstring"]
        assert fault.startswith(
            "Invalid %s: Unrecognized value 'x', acceptable values are"
            % field), fault
    else:
        assert resp[field] is shown


@pytest.mark.parametrize("boot_index,status", [
    (2 ** 31 - 1, 201), (2 ** 31, 400), (2 ** 63, 400), (-1, 400)])
def test_a_volume_targets_boot_index_fits_its_column(
        any_db_api, boot_index, status):
    api = any_db_api
    n = api.create_node(name="vt")
    got, resp, _ = api.request("POST", "/v1/volume/targets", {
        "node_uuid": n["uuid"], "volume_type": "iscsi", "volume_id": "v1",
        "boot_index": boot_index}, version="1.95")
    assert got == status, resp
    if status == 400:
        assert "boot_index must be an integer from 0 to 2147483647" in \
            json.loads(resp["error_message"])["faultstring"]
    else:
        assert resp["boot_index"] == boot_index


@pytest.mark.parametrize("method,path,raw", [
    ("POST", "/v1/nodes",
     b'{"driver": "fake-hardware", "description": "a\\u0000b"}'),
    ("POST", "/v1/nodes",
     b'{"driver": "fake-hardware", "extra": {"k\\u0000": 1}}'),
    ("PATCH", "/v1/nodes/{u}",
     b'[{"op": "add", "path": "/extra/a", "value": ["\\u0000"]}]'),
    ("PATCH", "/v1/nodes/{u}",
     b'[{"op": "replace", "path": "/owner", "value": "\\u0000"}]'),
])
def test_a_nul_character_in_a_body_is_400(any_db_api, method, path, raw):
    """PostgreSQL keeps a NUL in neither text nor JSON (it was a 500
    there); here it is refused on every database alike."""
    api = any_db_api
    n = api.create_node(name="nul", extra={"keep": 1})
    before = api.node(n["uuid"])
    status, resp, _ = api.request(method, path.replace("{u}", n["uuid"]),
                                  raw=raw)
    assert status == 400, (status, resp)
    assert "a string holds a NUL character" in json.loads(
        resp["error_message"])["faultstring"]
    assert api.node(n["uuid"]) == before
    # the six characters \u0000 (an escaped backslash) are only text
    status, node, _ = api.request(
        "POST", "/v1/nodes",
        raw=b'{"driver": "fake-hardware", "description": "\\\\u0000"}')
    assert status == 201 and node["description"] == "\\u0000", node


@pytest.mark.parametrize("path,part,at", [
    ("/v1/nodes?driver=%00", "query string", 7),
    ("/v1/nodes?name=a%00b&x=1", "query string", 6),
    ("/v1/ports?address=%00", "query string", 8),
])
def test_a_nul_character_in_a_url_is_400(any_db_api, path, part, at):
    status, out, _ = any_db_api.request("GET", path)
    assert status == 400, out
    error = json.loads(out["error_message"])
    assert error["code"] == 400 and error["title"] == "Bad Request"
    assert error["description"] == (
        "The request URL's %s holds a NUL character (%%00 at %d)"
        % (part, at)), error


@pytest.mark.parametrize("method,path,body", [
    ("POST", "/v1/nodes", {"driver": "fake-hardware", "boot_mode": "b" * 17}),
    ("POST", "/v1/portgroups", {"node_uuid": "{u}", "mode": "m" * 256}),
    ("POST", "/v1/allocations", {"resource_class": "rc",
                                 "owner": "o" * 256}),
    ("POST", "/v1/volume/connectors", {"node_uuid": "{u}", "type": "iqn",
                                       "connector_id": "c" * 256}),
    ("POST", "/v1/volume/targets", {"node_uuid": "{u}", "boot_index": 0,
                                    "volume_type": "t" * 65,
                                    "volume_id": "v"}),
    ("POST", "/v1/volume/targets", {"node_uuid": "{u}", "boot_index": 0,
                                    "volume_type": "iscsi",
                                    "volume_id": "v" * 37}),
])
def test_strings_longer_than_their_column_are_400(
        any_db_api, method, path, body):
    """PostgreSQL and MariaDB refused them with a 500; SQLite kept any
    length. Now the schema bounds each by its column, on every
    database."""
    api = any_db_api
    n = api.create_node(name="long")
    body = json.loads(json.dumps(body).replace("{u}", n["uuid"]))
    status, resp, _ = api.request(method, path, body, version="1.95")
    assert status == 400, (status, resp)
    assert "is too long" in json.loads(resp["error_message"])["faultstring"]


@pytest.mark.parametrize("path,body,says", [
    ("/v1/deploy_templates", {"name": "CUSTOM_BIG", "steps": [{
        "interface": "deploy", "step": "x", "args": {},
        "priority": 2 ** 31}]},
     'deploy_steps[0]: "priority" must be at most 2147483647'),
    ("/v1/runbooks", {"name": "CUSTOM_BIG", "steps": [{
        "interface": "deploy", "step": "x", "args": {}, "order": 2 ** 63}]},
     'clean_steps[0]: "order" must be at most 2147483647'),
])
def test_a_steps_priority_or_order_fits_its_column(any_db_api, path, body,
                                                   says):
    """The same 400 on every database: SQLite could not bind 2**63 (a
    500) and kept 2**31, which PostgreSQL and MySQL refused."""
    status, resp, _ = any_db_api.request("POST", path, body,
                                         version="1.115")
    assert status == 400, (status, resp)
    assert says in json.loads(resp["error_message"])["faultstring"]
