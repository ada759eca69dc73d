"""Baseline accountants of Bok's Tables 1-6, beside the paper's own bound.

* :mod:`.wang`: the fixed-size, replace-one RDP of Wang, Balle and Kasiviswanathan (2019) as
  dp_accounting computes it, in balls (certified);
* :mod:`.birrell`: Theorem 3.4 of Birrell, Ebrahimi, Behnia and Pacheco (2024), m in {3, 4, 5}, in balls;
* :mod:`.lossless`: the symmetrised-profile PLD (float FFT composition via dp_accounting: an estimate);
* :mod:`.columns`: the minimum over alpha of Corollary 1 / (6) of Bok, the RDP -> (eps, delta)
  conversion (:func:`certify.dpsgd.certificates.eps_ball`) shared by the Rényi columns;
* :mod:`.certificates`: their certificate kinds.

Facts about each column (what dp_accounting and the authors' code compute) come from the cited papers
and dp_accounting's documentation; the code is ours.
"""
