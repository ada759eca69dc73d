"""``certify plot --figure N``: redraw Figures 2-5 of Bok (2026) as PNG; ``certify plot --run CERT``: the user's own
run (:mod:`certify.run_plot`) (matplotlib: '.[plot]')."""

from __future__ import annotations

from .balls import int_flag

# registry hooks (see certify/registry.py)
KEY = "plot"
COMMANDS = {"plot": __name__}


def register(sub) -> None:
    p = sub.add_parser(
        "plot",
        help="redraw Figures 2-5 of Bok (2026), or plot your own run from its certificate (--run), as PNG (needs the 'plot' extra)",
        description="Write tables/figures/bok_2026_figure<N>.png (or --out-dir). Figures 2-3: eps vs T for the "
        "four accountants (from the same cells as `certify tables --paper bok`, cached); Figure 4: "
        "delta vs T with T p^2 = 1/2 and the limits of Lemma 3 / Proposition 4; Figure 5: one-step "
        "Rényi bounds vs alpha with the expansions of Proposition 5. A caption line in each figure "
        "says which values are certified. --run CERT: the certified epsilon of your run against steps (and epochs) "
        "and its delta(eps), with the certified band and the float libraries' values overlaid when installed.",
    )
    p.add_argument("--figure", type=int_flag(2, 5), metavar="{2,3,4,5}", help="which figure")
    p.add_argument("--run", metavar="CERT", help="a DP-SGD certificate (Rényi): plot this run (re-checked first)")
    p.add_argument("--out", metavar="FILE", help="--run: the PNG to write (default: CERT with .png)")
    p.add_argument("--out-dir", default="tables/figures", metavar="DIR", help="output folder (default tables/figures)")
    p.add_argument(
        "--tables-dir",
        metavar="DIR",
        help="folder holding published/: Figures 2-3 draw the paper's printed values from it (default tables; checked when given)",
    )
    p.add_argument("--cache-dir", default=".certify-cache", metavar="DIR", help="on-disk cache ('' to disable)")
    p.set_defaults(func=run)


def run(args) -> int:
    import os

    from .balls import InputError

    if (args.figure is None) == (args.run is None):
        raise InputError("--figure", "give either --figure N (Bok's figures) or --run CERT (your run)")
    tables_dir = "tables" if args.tables_dir is None else args.tables_dir
    if args.tables_dir is not None or args.figure in (2, 3):  # read by Figures 2-3; a folder given is checked anyway
        from .tables_command import check_tables_dir

        check_tables_dir(tables_dir)
    if args.run is not None:
        from .run_plot import run as run_plot

        try:
            return run_plot(args)
        except InputError as err:  # the certificate's reader names it FILE / certificate: here it is --run's
            if err.parameter not in ("FILE", "certificate"):
                raise
            raise InputError("--run", err.message) from None

    from .dpsgd.plots import plot

    os.makedirs(args.out_dir, exist_ok=True)  # checked (or creatable) before: cli.check_paths
    path = plot(args.figure, args.out_dir, tables_dir, args.cache_dir or None)
    print(f"wrote {path}")
    return 0
