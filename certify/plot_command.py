"""``certify plot --figure N``: redraw Figures 2-5 of Bok (2026) as PNG (matplotlib: '.[plot]')."""

from __future__ import annotations

from .balls import int_flag

# registry hooks (see certify/registry.py)
KEY = "plot"
COMMANDS = (__name__,)


def register(sub) -> None:
    p = sub.add_parser(
        "plot",
        help="redraw Figures 2-5 of Bok (2026) as PNG (needs the 'plot' extra)",
        description="Write tables/figures/bok_2026_figure<N>.png (or --out-dir). Figures 2-3: eps vs T for the "
        "four accountants (from the same cells as `certify tables --paper bok`, cached); Figure 4: "
        "delta vs T with T p^2 = 1/2 and the limits of Lemma 3 / Proposition 4; Figure 5: one-step "
        "Rényi bounds vs alpha with the expansions of Proposition 5. A caption line in each figure "
        "says which values are certified.",
    )
    p.add_argument("--figure", type=int_flag(2, 5), required=True, metavar="{2,3,4,5}", help="which figure")
    p.add_argument("--out-dir", default="tables/figures", metavar="DIR", help="output folder (default tables/figures)")
    p.add_argument("--tables-dir", default="tables", metavar="DIR", help="folder holding published/ (default tables)")
    p.add_argument("--cache-dir", default=".certify-cache", metavar="DIR", help="on-disk cache ('' to disable)")
    p.set_defaults(func=run)


def run(args) -> int:
    import os

    from .dpsgd.plots import plot

    os.makedirs(args.out_dir, exist_ok=True)  # checked (or creatable) before: cli.check_paths
    path = plot(args.figure, args.out_dir, args.tables_dir, args.cache_dir or None)
    print(f"wrote {path}")
    return 0
