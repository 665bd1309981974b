"""Amounts in a currency (``x-pawflow-currency``, an ISO 4217 code) as people read them.

One format wherever PawFlow writes an amount itself — the terminal app, a flow's message
(``${…:money('EUR')}``) — and the one the web chat shows to an English reader (its
``Intl.NumberFormat`` in ``en``): the currency's symbol, or its code and a space, then the
amount grouped by thousands with the currency's own number of decimals: ``€1,234.50``,
``¥1,235``, ``CHF 42.50``, ``-$3.00``.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

SYMBOLS = {
    "AUD": "A$",
    "BRL": "R$",
    "CAD": "CA$",
    "CNY": "CN¥",
    "EUR": "€",
    "GBP": "£",
    "HKD": "HK$",
    "ILS": "₪",
    "INR": "₹",
    "JPY": "¥",
    "KRW": "₩",
    "MXN": "MX$",
    "NZD": "NZ$",
    "PHP": "₱",
    "TWD": "NT$",
    "USD": "$",
    "VND": "₫",
    "XAF": "FCFA\u00a0",
    "XCD": "EC$",
    "XOF": "F\u202fCFA\u00a0",
    "XPF": "CFPF\u00a0",
}
"""The symbols written instead of the code (a code is followed by a no-break space)."""

_NO_DECIMALS = frozenset(
    {
        *("AFN", "ALL", "BIF", "CLP", "COP", "DJF", "GNF", "HUF", "IDR", "IQD", "IRR", "ISK"),
        *("JPY", "KMF", "KPW", "KRW", "LAK", "LBP", "MGA", "MMK", "PKR", "PYG", "RWF", "SLL"),
        *("SOS", "SYP", "UGX", "VND", "VUV", "XAF", "XOF", "XPF", "YER"),
    }
)
_THREE_DECIMALS = frozenset({"BHD", "JOD", "KWD", "LYD", "OMR", "TND"})


def decimals(currency: str) -> int:
    """How many decimals an amount in ``currency`` is written with."""
    code = currency.upper()
    return 0 if code in _NO_DECIMALS else 3 if code in _THREE_DECIMALS else 2


def money(amount: object, currency: str) -> str:
    """``amount`` (a number, or the text of one) in ``currency``: ``€42.50``. Text that is
    no number is returned as it is."""
    try:
        value = Decimal(str(amount).strip())
    except InvalidOperation:
        return str(amount)
    if not value.is_finite() or isinstance(amount, bool):
        return str(amount)
    code = currency.upper()
    places = decimals(code)
    rounded = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    sign = "-" if rounded < 0 else ""
    symbol = SYMBOLS.get(code, f"{code}\u00a0")
    return f"{sign}{symbol}{abs(rounded):,.{places}f}"
