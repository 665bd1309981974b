"""The store's engine: the database and what runs SQL on it, under every table.

``database`` (the transaction interface, ``Tx`` and ``Database``), the two backends
(``sqlite``, the embedded default; ``postgres``, loaded only for a ``postgresql://`` URL),
``migrations`` and their SQL (``sql/<backend>/``), ``rows`` (the one row codec) and
``metrics`` (the store's gauges, counters and spans). It imports no other wing.
"""
