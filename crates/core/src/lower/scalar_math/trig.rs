//! Trigonometric functions and their inverses: argument reduction and polynomial
//! approximations for sin, cos, tan, arcsin, arccos, arctan, arctan2.
