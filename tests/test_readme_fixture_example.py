"""The README's pytest example, run as it is written (tests/test_readme.py checks that the
README's block is this file's code, byte for byte): the ``clearing_sim`` fixture."""

# test_redeem.py: clearing_sim is a served world (clearing-sim serve), fresh for each test
import httpx


def test_a_redeem_armed_to_fail_parks(clearing_sim):
    shim = clearing_sim.client  # the operator's calls, on clearing_sim.base_url
    issuer = shim.add_participant({
        "kind": "stablecoin_issuer", "name": "Ether Pound", "rtgsBalanceGbp": "1000000.00",
        "assets": [{"code": "GBPE", "ledger": "evm"}]})
    member = shim.add_participant({"kind": "clearing_member", "name": "Northbank",
                                   "wallets": {"GBPE": "1000.00"}})
    with httpx.Client(base_url=clearing_sim.base_url,
                      headers={"Authorization": f"Bearer {member['apiKey']}"}) as api:
        tx = api.post("/api/v1/transactions", json={
            "useCase": "redeem", "paymentReference": "INV-1",
            "source": {"amount": "50.00", "asset": issuer["assets"][0]},
            "target": {"amount": "50.00", "asset": {"code": "GBP"}}}).json()["data"]
        shim.arm_outcome(member["adminToken"], tx["id"], "failed")  # the issuer will fail it
        shim.advance(120)  # two virtual minutes, in milliseconds
        after = api.get(f"/api/v1/transactions/{tx['id']}").json()["data"]
    assert (after["lifecycleStatus"], after["parked"]) == ("failed", True)
