// pto-isa tile types and tile instructions used by collc's Ascend adapter (collc/pto_comm.hpp),
// declared for a g++ syntax check.
//
// Sources (public):
//   * hw-native-sys/pto-isa include/pto/common/pto_tile.hpp (read from the mirror
//     cannmirror/pto-isa @ 072fcbc1): enum class Layout {ND, DN, NZ, ...}; DYNAMIC = -1;
//     Shape<N1..N5> and Stride<SN1..SN5> with the 5-int constructors; GlobalTensor<Element,
//     Shape, Stride, Layout> whose constructor takes `__gm__ Element*` (DType), a Shape and a
//     Stride; Tile<TileType Loc, Element, Rows, Cols, BLayout, RowValid, ColValid, ...> with
//     the (size_t, size_t) valid-shape constructor when both valid dims are DYNAMIC, and its
//     static_asserts (valid dims within the shape; a RowMajor NoneBox tile's row is a
//     multiple of 32 bytes).
//   * Tile::SetValidShape(rows, cols): used on dynamic-valid Vec tiles by pypto's host
//     allreduce kernel (hw-native-sys/pypto python/pypto/runtime/builtins/collectives/
//     allreduce/templates/kernel.cpp.in, `acc_tile.SetValidShape(1, transfer_chunk)`).
//   * include/pto/common/pto_instr.hpp and docs/isa (TLOAD/TSTORE/TADD pages):
//     `template <typename TileData, typename GlobalData, typename... WaitEvents>
//      PTO_INST RecordEvent TLOAD(TileData& dst, GlobalData& src, WaitEvents&... events);`
//     TSTORE(GlobalData& dst, TileData& src, ...); TADD/TMUL/TMAX/TMIN(dst, src0, src1, ...);
//     TMOV(dst, src, ...); TASSIGN(obj, addr). Documented constraints checked here:
//     sizeof(TileData::DType) == sizeof(GlobalData::DType); the tile of a TLOAD/TSTORE is a
//     Vec (or Mat) tile.
#ifndef COLLC_ASCEND_DECLS_PTO_INST_HPP
#define COLLC_ASCEND_DECLS_PTO_INST_HPP

#include "../cce_builtins.hpp"

namespace pto {

enum class Layout { ND, DN, NZ, SCALE, MAX };
constexpr int DYNAMIC = -1;

template <int N1 = DYNAMIC, int N2 = DYNAMIC, int N3 = DYNAMIC, int N4 = DYNAMIC, int N5 = DYNAMIC>
struct Shape {
    PTO_INTERNAL Shape();
    PTO_INTERNAL Shape(int n1, int n2, int n3, int n4, int n5);
    int shape[5] = {1};
};

template <int SN1 = DYNAMIC, int SN2 = DYNAMIC, int SN3 = DYNAMIC, int SN4 = DYNAMIC, int SN5 = DYNAMIC>
struct Stride {
    PTO_INTERNAL Stride();
    PTO_INTERNAL Stride(int n1, int n2, int n3, int n4, int n5);
    int stride[5] = {1};
};

template <typename Element_, typename Shape_, typename Stride_, Layout Layout_ = Layout::ND>
struct GlobalTensor {
    using Shape = Shape_;
    using Stride = Stride_;
    using DType = __gm__ Element_;
    static constexpr Layout layout = Layout_;
    PTO_INTERNAL GlobalTensor(DType* data, const Shape& shape = Shape(), const Stride& stride = Stride());
    AICORE DType* data();
};

// Enumerators: the ones pto_tile.hpp and the ISA pages use (TileType::Vec/Mat/Left/Right/Acc,
// BLayout and SLayout RowMajor/ColMajor, SLayout::NoneBox, PadValue::Null); others are omitted.
enum class TileType { Vec, Mat, Left, Right, Acc };
enum class BLayout { RowMajor, ColMajor };
enum class SLayout { NoneBox, RowMajor, ColMajor };
enum class PadValue { Null };

template <TileType Loc_, typename Element_, int Rows_, int Cols_, BLayout BFractal_ = BLayout::RowMajor,
          int RowValid_ = Rows_, int ColValid_ = Cols_, SLayout SFractal_ = SLayout::NoneBox, int SFractalSize_ = 512,
          PadValue PadVal_ = PadValue::Null>
struct Tile {
    using DType = Element_;
    static constexpr TileType Loc = Loc_;
    static constexpr int Rows = Rows_;
    static constexpr int Cols = Cols_;
    static constexpr int ValidRow = RowValid_;
    static constexpr int ValidCol = ColValid_;
    static_assert(Rows > 0 && ValidRow <= Rows && Cols > 0 && ValidCol <= Cols, "Invalid Tile Layout.");
    static_assert(!(BFractal_ == BLayout::RowMajor && SFractal_ == SLayout::NoneBox) ||
                      (Cols * sizeof(DType)) % 32 == 0,
                  "BFractal_ is RowMajor and SFractal_ is NoneBox: Rows must be 32 bytes align");

    AICORE Tile();
    template <int RowMask = ValidRow, int ColMask = ValidCol>
    AICORE Tile(std::enable_if_t<RowMask == DYNAMIC && ColMask == DYNAMIC, size_t> VR,
                std::enable_if_t<RowMask == DYNAMIC && ColMask == DYNAMIC, size_t> VC);
    AICORE void SetValidShape(size_t rows, size_t cols);
};

template <typename T>
struct is_tile : std::false_type {};
template <TileType L, typename E, int R, int C, BLayout B, int RV, int CV, SLayout S, int SS, PadValue P>
struct is_tile<Tile<L, E, R, C, B, RV, CV, S, SS, P>> : std::true_type {};
template <typename T>
struct is_global : std::false_type {};
template <typename E, typename Sh, typename St, Layout L>
struct is_global<GlobalTensor<E, Sh, St, L>> : std::true_type {};

struct RecordEvent {};

template <typename T, typename AddrType>
AICORE void TASSIGN(T& obj, AddrType addr);

template <typename TileData, typename GlobalData, typename... WaitEvents>
PTO_INST RecordEvent TLOAD(TileData& /*dst*/, GlobalData& /*src*/, WaitEvents&...) {
    static_assert(is_tile<TileData>::value && is_global<GlobalData>::value, "TLOAD(tile, global tensor)");
    static_assert(TileData::Loc == TileType::Vec || TileData::Loc == TileType::Mat, "TLOAD: Vec or Mat tile");
    static_assert(sizeof(typename TileData::DType) == sizeof(typename GlobalData::DType),
                  "TLOAD: sizeof(TileData::DType) == sizeof(GlobalData::DType)");
    return {};
}

template <typename TileData, typename GlobalData, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& /*dst*/, TileData& /*src*/, WaitEvents&...) {
    static_assert(is_tile<TileData>::value && is_global<GlobalData>::value, "TSTORE(global tensor, tile)");
    static_assert(sizeof(typename TileData::DType) == sizeof(typename GlobalData::DType),
                  "TSTORE: sizeof(TileData::DType) == sizeof(GlobalData::DType)");
    return {};
}

#define COLLC_DECL_BINARY(NAME)                                                                        \
    template <typename TileDst, typename TileSrc0, typename TileSrc1, typename... WaitEvents>            \
    PTO_INST RecordEvent NAME(TileDst& /*dst*/, TileSrc0& /*src0*/, TileSrc1& /*src1*/, WaitEvents&...) {             \
        static_assert(is_tile<TileDst>::value && is_tile<TileSrc0>::value && is_tile<TileSrc1>::value,     \
                      #NAME ": tiles");                                                                   \
        static_assert(std::is_same<typename TileDst::DType, typename TileSrc0::DType>::value &&           \
                          std::is_same<typename TileDst::DType, typename TileSrc1::DType>::value,         \
                      #NAME ": one element type");                                                        \
        return {};                                                                                        \
    }
COLLC_DECL_BINARY(TADD)
COLLC_DECL_BINARY(TMUL)
COLLC_DECL_BINARY(TMAX)
COLLC_DECL_BINARY(TMIN)
#undef COLLC_DECL_BINARY

template <typename TileDst, typename TileSrc, typename... WaitEvents>
PTO_INST RecordEvent TMOV(TileDst& /*dst*/, TileSrc& /*src*/, WaitEvents&...) {
    static_assert(is_tile<TileDst>::value && is_tile<TileSrc>::value, "TMOV: tiles");
    return {};
}

}  // namespace pto

#endif  // COLLC_ASCEND_DECLS_PTO_INST_HPP
