"""Values and pure rules, the bottom layer: everything here is a frozen value or a pure function.

No SimPy, no I/O, no clock, and no import of any other package of ``clearing_sim``.

- The transaction and its words: ``transaction`` (the full form), ``lifecycle`` (statuses,
  public events, transitions), ``saga`` (steps and the saga's view), ``instruction`` (issuer
  instructions and outcomes), ``initiation`` (what a valid initiation is), ``integration``
  (which settlement mode and steps to expect).
- Money and parties: ``money``, ``fees``, ``reserve`` (proofs), ``parties`` (kinds and
  capabilities), ``profile`` (the issuer capability profile), ``ids``.
- Webhooks: ``delivery`` (event body, retry schedule, success, disable), ``signing`` (the
  signature scheme), ``webhook_url`` (public HTTPS only).
- Time and text: ``timefmt`` (virtual ms to ISO 8601), ``calendar`` (the RTGS's hours),
  ``latency`` (distributions as values), ``jsontext`` (encoders and the one decoder for text
  from outside), ``b64url`` (the one base64url spelling), ``errors`` (the catalogue of
  refusals).
"""
