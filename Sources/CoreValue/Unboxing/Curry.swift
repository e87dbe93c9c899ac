/// Curried forms of functions with 1 to 16 arguments, for `fromObject`:
/// `curry(Employee.init) <^> o <| "name" <^> o <| "age"`.

/// Turns a function of 1 argument into a chain of one-argument functions.
public func curry<A, R>(_ function: @escaping (A) -> R) -> (A) -> R {
    { a in function(a) }
}

/// Turns a function of 2 arguments into a chain of one-argument functions.
public func curry<A, B, R>(_ function: @escaping (A, B) -> R) -> (A) -> (B) -> R {
    { a in { b in function(a, b) } }
}

/// Turns a function of 3 arguments into a chain of one-argument functions.
public func curry<A, B, C, R>(_ function: @escaping (A, B, C) -> R) -> (A) -> (B) -> (C) -> R {
    { a in { b in { c in function(a, b, c) } } }
}

/// Turns a function of 4 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, R>(_ function: @escaping (A, B, C, D) -> R) -> (A) -> (B) -> (C) -> (D) -> R {
    { a in { b in { c in { d in function(a, b, c, d) } } } }
}

/// Turns a function of 5 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, R>(
    _ function: @escaping (A, B, C, D, E) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> R {
    { a in { b in { c in { d in { e in function(a, b, c, d, e) } } } } }
}

/// Turns a function of 6 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, R>(
    _ function: @escaping (A, B, C, D, E, F) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> R {
    { a in { b in { c in { d in { e in { f in function(a, b, c, d, e, f) } } } } } }
}

/// Turns a function of 7 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, R>(
    _ function: @escaping (A, B, C, D, E, F, G) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> R {
    { a in { b in { c in { d in { e in { f in { g in function(a, b, c, d, e, f, g) } } } } } } }
}

/// Turns a function of 8 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> R {
    { a in { b in { c in { d in { e in { f in { g in { h in function(a, b, c, d, e, f, g, h) } } } } } } } }
}

/// Turns a function of 9 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, I, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H, I) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> (I) -> R {
    { a in { b in { c in { d in { e in { f in { g in { h in { i in function(a, b, c, d, e, f, g, h, i) } } } } } } } } }
}

/// Turns a function of 10 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, I, J, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H, I, J) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> (I) -> (J) -> R {
    { a in
        { b in
            { c in
                { d in
                    { e in
                        { f in
                            { g in
                                { h in
                                    { i in
                                        { j in
                                            function(a, b, c, d, e, f, g, h, i, j)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Turns a function of 11 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, I, J, K, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H, I, J, K) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> (I) -> (J) -> (K) -> R {
    { a in
        { b in
            { c in
                { d in
                    { e in
                        { f in
                            { g in
                                { h in
                                    { i in
                                        { j in
                                            { k in
                                                function(a, b, c, d, e, f, g, h, i, j, k)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Turns a function of 12 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, I, J, K, L, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H, I, J, K, L) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> (I) -> (J) -> (K) -> (L) -> R {
    { a in
        { b in
            { c in
                { d in
                    { e in
                        { f in
                            { g in
                                { h in
                                    { i in
                                        { j in
                                            { k in
                                                { l in
                                                    function(a, b, c, d, e, f, g, h, i, j, k, l)
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Turns a function of 13 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, I, J, K, L, M, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H, I, J, K, L, M) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> (I) -> (J) -> (K) -> (L) -> (M) -> R {
    { a in
        { b in
            { c in
                { d in
                    { e in
                        { f in
                            { g in
                                { h in
                                    { i in
                                        { j in
                                            { k in
                                                { l in
                                                    { m in
                                                        function(a, b, c, d, e, f, g, h, i, j, k, l, m)
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Turns a function of 14 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, I, J, K, L, M, N, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H, I, J, K, L, M, N) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> (I) -> (J) -> (K) -> (L) -> (M) -> (N) -> R {
    { a in
        { b in
            { c in
                { d in
                    { e in
                        { f in
                            { g in
                                { h in
                                    { i in
                                        { j in
                                            { k in
                                                { l in
                                                    { m in
                                                        { n in
                                                            function(a, b, c, d, e, f, g, h, i, j, k, l, m, n)
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Turns a function of 15 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H, I, J, K, L, M, N, O) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> (I) -> (J) -> (K) -> (L) -> (M) -> (N) -> (O) -> R {
    { a in
        { b in
            { c in
                { d in
                    { e in
                        { f in
                            { g in
                                { h in
                                    { i in
                                        { j in
                                            { k in
                                                { l in
                                                    { m in
                                                        { n in
                                                            { o in
                                                                function(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o)
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Turns a function of 16 arguments into a chain of one-argument functions.
public func curry<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, R>(
    _ function: @escaping (A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P) -> R
) -> (A) -> (B) -> (C) -> (D) -> (E) -> (F) -> (G) -> (H) -> (I) -> (J) -> (K) -> (L) -> (M) -> (N) -> (O) -> (P) -> R {
    { a in
        { b in
            { c in
                { d in
                    { e in
                        { f in
                            { g in
                                { h in
                                    { i in
                                        { j in
                                            { k in
                                                { l in
                                                    { m in
                                                        { n in
                                                            { o in
                                                                { p in
                                                                    function(
                                                                        a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)
                                                                }
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
