/**
 * Tree-sitter grammar of collc's `.coll` files, kept in step with the pest grammar
 * (grammar/src/coll.pest): the declaration and statement nodes carry the pest
 * rule names, and collc/tests/tree_sitter.rs parses every example with both and
 * compares the items and statements (kind, nesting and byte range).
 */

// Tightest last; as in pest: `* / %`, `+ -`, `<< >>`, `&`, `^`, `|`, then comparisons.
const PREC = {
  or: 1, and: 2, not: 3, cmp: 4, bit_or: 5, bit_xor: 6, bit_and: 7, shift: 8, add: 9, mul: 10,
  neg: 11,
};

const sep1 = (rule, s) => seq(rule, repeat(seq(s, rule)));

module.exports = grammar({
  name: 'coll',

  extras: $ => [/[ \t\r\n\uFEFF]/, $.comment],

  word: $ => $.identifier,


  rules: {
    source_file: $ => $.collective,

    collective: $ => seq(
      'collective', field('name', $.identifier), ':', field('semantics', $.semantics),
      '{', repeat($._item), '}',
    ),
    semantics: $ => seq(
      field('kind', $.identifier), '(', optional(sep1($.identifier, ',')), ')',
    ),

    _item: $ => choice(
      $.ranks_decl, $.param_decl, $.const_decl, $.let_decl, $.blocks_decl, $.signal_decl,
      $.window_decl, $.tile_decl, $.array_decl, $.require_decl, $.calls_decl, $.type_decl,
      $.op_decl,
      $.body_decl, $.epilogue_decl,
    ),
    ranks_decl: $ => seq(
      'ranks', field('name', $.identifier),
      choice(seq('in', $.domain), seq('>=', $._expr)), ';',
    ),
    param_decl: $ => seq('param', field('name', $.identifier), ':', choice(
      alias('rank', $.type),
      seq(alias('int', $.type), 'in', $.domain),
    ), ';'),
    domain: $ => seq($._expr, '..=', $._expr),
    const_decl: $ => seq('const', field('name', $.identifier), '=', $._expr, ';'),
    let_decl: $ => seq('let', field('name', $.identifier), '=', $._expr, ';'),
    blocks_decl: $ => seq(
      'blocks', field('name', $.identifier), 'in', $._expr, '..', $._expr, ';',
    ),
    signal_decl: $ => seq(
      'signal', field('name', $.identifier), $.dims,
      optional(choice(seq('as', 'value'), 'monotonic')), repeat($.lifetime), ';',
    ),
    // `calls` and `monotonic` are contextual words, as in pest: keywords only here.
    calls_decl: $ => seq('calls', '<=', $._expr, ';'),
    // `type` is contextual too: the element-type parameter and the types it ranges over.
    type_decl: $ => seq(
      'type', field('name', $.identifier), 'in', sep1($._scalar_type, '|'), ';',
    ),
    // `op` is contextual too: the reduction-operator parameter and the operators it ranges over.
    op_decl: $ => seq(
      'op', field('name', $.identifier), 'in', sep1($.identifier, '|'), ';',
    ),
    _scalar_type: $ => alias(choice('f32', 'f64', 'i32', 'i64'), $.type),
    _elem_type: $ => choice($._scalar_type, alias($.identifier, $.type_name)),
    window_decl: $ => seq(
      'window', field('name', $.identifier), ':', $._elem_type, $.dims,
      repeat($.lifetime), ';',
    ),
    lifetime: $ => choice(seq('per', 'call'), 'reused'),
    tile_decl: $ => seq(
      'tile', field('name', $.identifier), ':', $._elem_type, $.dims, ';',
    ),
    array_decl: $ => seq(
      'array', field('name', $.identifier), ':', alias('int', $.type), $.dims,
      'in', $.domain, ';',
    ),
    require_decl: $ => seq('require', $._cond, ';'),
    body_decl: $ => seq('body', $.block),
    epilogue_decl: $ => seq('epilogue', $.block),
    dims: $ => repeat1(seq('[', $._expr, ']')),

    block: $ => seq('{', repeat($._stmt), '}'),
    _stmt: $ => choice(
      $.let_stmt, $.notify_stmt, $.wait_stmt, $.copy_stmt, $.get_stmt, $.put_stmt,
      $.reduce_stmt, $.fence_stmt, $.for_stmt, $.if_stmt, $.return_stmt,
    ),
    let_stmt: $ => seq('let', field('name', $.identifier), '=', $._expr, ';'),
    notify_stmt: $ => seq(
      'notify', $.cell, optional($.at), field('op', $.notify_op), $._expr, ';',
    ),
    notify_op: $ => choice('+=', '-=', '='),
    wait_stmt: $ => seq('wait', $.cell, optional($.at), $.cmp_op, $._expr, ';'),
    copy_stmt: $ => seq('copy', $.region, '<-', $.region, ';'),
    get_stmt: $ => seq('get', $.region, '<-', $.region, $.at, ';'),
    put_stmt: $ => seq('put', $.region, $.at, '<-', $.region, ';'),
    reduce_stmt: $ => seq(
      'reduce', field('op', $.identifier), $.region, optional(field('to', $.at)), '<-', $.region,
      optional($.at), ';',
    ),
    fence_stmt: $ => seq('fence', ';'),
    for_stmt: $ => seq(
      'for', field('var', $.identifier), 'in', $._loop_range, field('body', $.block),
    ),
    _loop_range: $ => choice(
      alias('peers', $.peers), alias('ranks', $.all_ranks), $.span_range, $.rev_range,
    ),
    span_range: $ => seq(
      $._expr, '..', $._expr, optional(seq('step', choice($.geo_step, $._expr))),
    ),
    geo_step: $ => seq('*', $._expr),
    rev_range: $ => seq('(', $.span_range, ')', '.', 'rev', '(', ')'),
    if_stmt: $ => seq(
      'if', $._cond, $.block, repeat($.else_if), optional($.else_block),
    ),
    else_if: $ => seq('else', 'if', $._cond, $.block),
    else_block: $ => seq('else', $.block),
    return_stmt: $ => seq('return', 'if', $._cond, ';'),

    at: $ => seq('@', $._expr),
    cell: $ => seq(field('signal', $.identifier), repeat1(seq('[', $._expr, ']'))),
    region: $ => seq(
      field('buffer', $.identifier), repeat(seq('[', $._expr, ']')), '[', $.slice, ']',
    ),
    slice: $ => seq(optional($._expr), '..', optional($._expr)),

    cmp_op: $ => choice('>=', '<=', '==', '!=', '>', '<'),
    _cond: $ => choice($.or_cond, $.and_cond, $.not_cond, $._cond_atom),
    or_cond: $ => prec.left(PREC.or, seq($._cond, '||', $._cond)),
    and_cond: $ => prec.left(PREC.and, seq($._cond, '&&', $._cond)),
    not_cond: $ => prec(PREC.not, seq('!', $._cond)),
    _cond_atom: $ => choice($.bool, $.compare, seq('(', $._cond, ')')),
    bool: $ => choice('true', 'false'),
    compare: $ => prec(PREC.cmp, seq($._expr, $.cmp_op, $._expr)),

    _expr: $ => choice($.binary, $.neg, $._operand),
    binary: $ => choice(
      prec.left(PREC.add, seq($._expr, choice('+', '-'), $._expr)),
      prec.left(PREC.mul, seq($._expr, choice('*', '/', '%'), $._expr)),
      prec.left(PREC.shift, seq($._expr, choice('<<', '>>'), $._expr)),
      prec.left(PREC.bit_and, seq($._expr, '&', $._expr)),
      prec.left(PREC.bit_xor, seq($._expr, '^', $._expr)),
      prec.left(PREC.bit_or, seq($._expr, '|', $._expr)),
    ),
    neg: $ => prec(PREC.neg, seq('-', $._expr)),
    _operand: $ => choice(
      $.integer, $.call, $.indexed, $.identifier, seq('(', $._expr, ')'),
    ),
    call: $ => seq(field('function', $.identifier), '(', sep1($._expr, ','), ')'),
    indexed: $ => seq($.identifier, repeat1(seq('[', $._expr, ']'))),

    identifier: $ => /[A-Za-z_][A-Za-z0-9_]*/,
    integer: $ => /[0-9][0-9_]*/,
    comment: $ => token(seq('//', /[^\n]*/)),
  },
});
