//! Oblivious transfer: Chou–Orlandi base OT and IKNP correlated OT extension.
