"""Format amounts of money."""


def format_cents(cents):
    """Return an integer number of cents as dollars, e.g. -123405 -> "-$1,234.05"."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"
