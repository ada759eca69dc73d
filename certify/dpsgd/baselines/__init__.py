"""Baseline accountants of Bok's Tables 1-6, beside the paper's own bound.

* :mod:`.wang`: the fixed-size, replace-one RDP of Wang, Balle and Kasiviswanathan (2019) as
  dp_accounting computes it, in balls (certified);
* :mod:`.birrell`: Theorem 3.4 of Birrell, Ebrahimi, Behnia and Pacheco (2024), m in {3, 4, 5}, in balls;
* :mod:`.lossless`: the symmetrised-profile PLD (float FFT composition via dp_accounting: an estimate);
* :mod:`.conversion`: Corollary 1 / (6) of Bok, the RDP -> (eps, delta) conversion shared by the
  Rényi columns.

Facts about each column (what dp_accounting and the authors' code compute) come from
../shared/notes/dpsgd-accountants.md; the code is ours.
"""
