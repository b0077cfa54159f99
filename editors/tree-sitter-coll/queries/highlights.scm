; Highlights of `.coll` files.

[
  "collective" "ranks" "param" "const" "let" "blocks" "signal" "window" "tile" "array"
  "require" "body" "epilogue" "in" "as" "value" "per" "call" "reused" "step"
  "monotonic" "calls" "type" "op"
] @keyword

[ "for" "if" "else" "return" ] @keyword.control

[ "notify" "wait" "copy" "get" "put" "reduce" "fence" ] @function.builtin

(type) @type
(type_name) @type
(peers) @variable.builtin
(all_ranks) @variable.builtin
(bool) @constant.builtin
(integer) @number
(comment) @comment

((identifier) @variable.builtin
  (#any-of? @variable.builtin "me" "call"))

(collective name: (identifier) @module)
(semantics kind: (identifier) @type)
(ranks_decl name: (identifier) @constant)
(param_decl name: (identifier) @variable.parameter)
(const_decl name: (identifier) @constant)
(signal_decl name: (identifier) @variable)
(window_decl name: (identifier) @variable)
(tile_decl name: (identifier) @variable)
(type_decl name: (identifier) @type)
(op_decl name: (identifier) @type)
(array_decl name: (identifier) @variable)
(cell signal: (identifier) @variable)
(region buffer: (identifier) @variable)
((call function: (identifier) @function.builtin)
  (#any-of? @function.builtin "log2" "pow2"))
(call function: (identifier) @function)
(reduce_stmt op: (identifier) @operator)
(rev_range "rev" @function.method)

[ "+" "-" "*" "/" "%" "+=" "-=" "=" "<-" "@" ".." "..=" "&&" "||" "!"
  "<<" ">>" "&" "^" "|" "<=" ">=" ] @operator
(cmp_op) @operator
[ "(" ")" "[" "]" "{" "}" ] @punctuation.bracket
[ ";" "," ":" "." ] @punctuation.delimiter
