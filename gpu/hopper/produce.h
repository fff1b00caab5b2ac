#pragma once
// The Hopper attention kernel's producer warp: the bulk (tensor) copies of the cache's tiles into
// the ring, for bf16, fp8 and MXFP4 caches, contiguous and paged (gpu/hopper/attention.hip).
// Included by gpu/hopper/attention.hip only: its device code, in the anonymous namespace of that one
// translation unit.
#include <cstdint>

#include "gpu/common/operands.h"
#include "gpu/hopper/traits.h"
#include "gpu/hopper/work.h"
#include "gpu/sm90/tma.h"

namespace mlacheck::gpu::hopper {
namespace {

// The producer warp: every tile of every token of the block's work items, each into the next stage
// once its readers have released it. A contiguous cache: one box of kTileKeys rows per 64 dims
// (rows past the cache's end land as zeros, and every box counts its whole bytes); a paged cache:
// the tile's n rows only, each run of them in one page as boxes of 2^k rows.
template <bool Chunked, int Pack>
__device__ void produce(const AttentionArgs& a, const ItemSource<Chunked>& items, const KvMaps& maps,
                        unsigned char* stages, Barrier* full, Barrier* empty) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const bool paged = a.kv_indices != nullptr;
  // The cache is read once: its lines go first from L2 (the split partials and the merge's reads
  // stay).
  const uint64_t policy = sm90::l2_evict_first_policy();
  int iter = 0;
  for (TokenCursor<true, Chunked, Pack> c(a, items); c.more; c.advance(a)) {
    const WorkItem& w = c.w;
    const TokenKeys k = c.keys();
    for (int t = 0; t < k.tiles; ++t, ++iter) {
      const int s = iter % kStages;
      const auto phase = static_cast<uint32_t>((iter / kStages) & 1);
      const int64_t t0 = k.first + static_cast<int64_t>(t) * kTileKeys;
      const int n = k.keys_in(t);
      // Paged: this lane's first run and its row, looked up before the wait for the stage, so that
      // the page table's latency passes during the wait.
      const PageRun first_run = paged ? page_run(a.page_size, t0, n, lane) : PageRun{};
      const int64_t first_row = first_run.from != first_run.to ? common::kv_row(a, w.b, first_run.from) : 0;
      mma::bulk_barrier_wait(&empty[s], phase ^ 1);  // a fresh barrier's "previous" phase is done
      unsigned char* dst = stages + s * KvTile::kBytes;
      Barrier* bars = full + s * KvTile::kBoxes;
      // Boxes of 2^k rows from cache row `row` into tile rows from `at` on.
      auto load = [&](int at, int k, int32_t row) {
#pragma unroll
        for (int box = 0; box < KvTile::kBoxes; ++box)
          sm90::tma_load_2d(dst + box * KvTile::kBoxBytes + at * KvTile::kRowBytes, &maps.rows[k],
                            box * KvTile::kBoxDims, row, &bars[box], policy);
      };
      // Each box's bytes announced on its barrier before any copy is issued.
      if (lane == 0)
        for (int box = 0; box < KvTile::kBoxes; ++box)
          mma::bulk_barrier_expect(&bars[box], static_cast<uint32_t>((paged ? n : kTileKeys) * KvTile::kRowBytes));
      if (!paged) {
        if (lane == 0) load(0, kRunMaps - 1, static_cast<int32_t>(w.row0 + t0));
      } else {
        // Lane j takes the tile's j-th run of keys in one page (the first from t0, the others
        // from a page boundary): its first row looked up, the run cut into boxes of 2^k rows,
        // largest first.
        __syncwarp();
        for (int j = lane;; j += kWarpSize) {
          const PageRun run = j == lane ? first_run : page_run(a.page_size, t0, n, j);
          if (run.from == run.to) break;
          const int64_t from = run.from, to = run.to;
          const auto row = static_cast<int32_t>(j == lane ? first_row : common::kv_row(a, w.b, from));
          for (int at = static_cast<int>(from - t0), left = static_cast<int>(to - from); left > 0;) {
            const int k = 31 - __clz(left);  // left <= kTileKeys = 2^(kRunMaps - 1)
            load(at, k, row + (at - static_cast<int>(from - t0)));
            at += 1 << k;
            left -= 1 << k;
          }
        }
      }
    }
  }
}

// --- fp8 tiles (a16w8) --------------------------------------------------------------------------

// The ring position of part `part` (the producer and the owners count parts alike: tile
// iteration x kFp8Parts + the owner's warp).
template <int Parts = kFp8RingParts>
__device__ __forceinline__ int ring_slot(int part) { return part % Parts; }
template <int Parts = kFp8RingParts>
__device__ __forceinline__ uint32_t ring_phase(int part) {
  return static_cast<uint32_t>((part / Parts) & 1);
}

// Paged caches, in the decoded kernels' producers (produce_fp8, produce_mxfp4): the cache rows of a
// tile's keys t0 + lane and t0 + 32 + lane, their page table entries loaded a tile ahead (tile
// t + 1's while tile t is copied; the request's page_indptr once a token) and the rows computed from
// them when the tile is copied, so that no page table latency lies between a free ring slot and its
// copy. Rows as 32-bit: fewer than 2^31 (launch.cpp), and the producer has 56 registers.
static_assert(kTileKeys == 2 * kWarpSize && kFp8Parts * kFp8PartRows == kTileKeys && 2 * kFp8PartRows == kWarpSize,
              "two keys a lane a tile; parts 0, 1 from the first, 2, 3 from the second");
struct PagedTileRows {
  int64_t page_base = 0;
  int32_t ahead[2] = {0, 0};  // the next tile's entries, as loaded (widened at use)
  __device__ void start(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k, int lane) {
    page_base = a.page_indptr[w.b];
    if (k.tiles > 0) look_ahead(a, k, 0, lane);
  }
  __device__ void look_ahead(const AttentionArgs& a, const TokenKeys& k, int tile, int lane) {
    const int64_t first = k.first + static_cast<int64_t>(tile) * kTileKeys;
#pragma unroll
    for (int i = 0; i < 2; ++i)
      if (lane + kWarpSize * i < k.keys_in(tile)) ahead[i] = common::page_of(a, page_base, first + lane + kWarpSize * i);
  }
  // Tile t's rows (0 past its keys); tile t + 1's entries loaded on the way.
  __device__ void rows(const AttentionArgs& a, const TokenKeys& k, int t, int lane, int32_t (&key_rows)[2]) {
    const int32_t pages[2] = {ahead[0], ahead[1]};
    if (t + 1 < k.tiles) look_ahead(a, k, t + 1, lane);
    const int64_t t0 = k.first + static_cast<int64_t>(t) * kTileKeys;
    const int n = k.keys_in(t);
#pragma unroll
    for (int i = 0; i < 2; ++i)
      key_rows[i] = lane + kWarpSize * i < n
                        ? static_cast<int32_t>(common::row_in_page(a, pages[i], t0 + lane + kWarpSize * i))
                        : 0;
  }
};

// Part q of a paged tile (key_rows: PagedTileRows::rows) cut into runs of rows that lie in
// consecutive cache rows (one page, or adjacent ones), each copied by one bulk copy from its first
// lane: lane r < rows holds the part's row r (key t0 + 16 q + r: lane 16 (q % 2) + r's row of its
// first (q < 2) or second key), and a run starts where a row does not follow the one before it.
struct PartRun {
  int32_t row = 0;        // this lane's cache row
  int32_t first_row = 0;  // the cache row of its run's first row
  int first = 0, end = 0;  // its run's first and past-the-last rows of the part
  bool mine = false;       // lane < rows
  bool leads = false;      // this lane holds its run's first row
};
__device__ __forceinline__ PartRun part_run(const int32_t (&key_rows)[2], int q, int rows, int lane) {
  PartRun r;
  r.row = __shfl_sync(0xFFFFFFFFu, q < 2 ? key_rows[0] : key_rows[1], (kFp8PartRows * (q % 2) + lane) % kWarpSize);
  const int32_t before = __shfl_up_sync(0xFFFFFFFFu, r.row, 1);
  r.mine = lane < rows;
  const uint32_t starts = __ballot_sync(0xFFFFFFFFu, r.mine && (lane == 0 || r.row != before + 1));
  // This row's run: its first row (the last start at or before it) and its end (the next start,
  // or the part's rows).
  const uint32_t upto = starts & (0xFFFFFFFFu >> (kWarpSize - 1 - lane));
  r.first = r.mine ? kWarpSize - 1 - __clz(upto) : 0;
  const uint32_t after = lane + 1 < kWarpSize ? starts >> (lane + 1) : 0u;
  r.end = after != 0 ? lane + __ffs(after) : rows;
  r.first_row = __shfl_sync(0xFFFFFFFFu, r.row, r.first);
  r.leads = r.mine && r.first == lane;
  return r;
}

// Whether a paged tile's n keys lie in consecutive cache rows (one page of 64 keys, or pages in
// order), from `first_row` on (key_rows: PagedTileRows::rows): then the producers copy it as they copy
// a contiguous tile. (By runs of each part, part_run, paged (64) fp8 took 1.17x and 1.27x the
// contiguous cache at 32 x 4096 and 128 x 4096 even with the pages in order, its copies the same
// bytes by the same bulk copies; copied whole, 1.06x and 1.10x: device run 7 of 2026-12-03's
// seventh session.)
__device__ __forceinline__ bool tile_is_one_run(const int32_t (&key_rows)[2], int n, int lane, int32_t& first_row) {
  first_row = __shfl_sync(0xFFFFFFFFu, key_rows[0], 0);
  bool follows = true;
#pragma unroll
  for (int i = 0; i < 2; ++i)
    if (lane + kWarpSize * i < n) follows = follows && key_rows[i] == first_row + lane + kWarpSize * i;
  return __all_sync(0xFFFFFFFFu, follows);
}

// Where a producer finds a tile's cache rows, one kind of cache each: tile(a, k, t, lane, key_rows,
// first_row) says whether the tile's rows are consecutive from first_row, else key_rows holds each
// key's row (PagedTileRows::rows). The producers' tile loops are instantiated per kind (produce_
// fp8_tiles, produce_mxfp4_tiles) so that only its own state lives across the loop: one loop over
// both paged kinds spilled 94-128 bytes in the MXFP4 producers (ptxas), where main's spilled 4.
struct ContiguousTiles {
  static constexpr bool kPaged = false;
  int64_t row0 = 0;  // the token's first key's row
  __device__ void start(const AttentionArgs&, const WorkItem& w, const TokenKeys& k, int) {
    row0 = int64_t{w.row0} + k.first;
  }
  __device__ bool tile(const AttentionArgs&, const TokenKeys&, int t, int, int32_t (&)[2], int64_t& first_row) {
    first_row = row0 + static_cast<int64_t>(t) * kTileKeys;
    return true;
  }
};

// Paged caches whose pages hold whole tiles (page_size % kTileKeys == 0), read by a split that
// starts on a tile boundary (a uniform plan's ceil(L / S) keys a split, a multiple of 64: 32 x 4096
// in 4 splits): every tile lies in one page, its rows consecutive from
// kv_indices[page_base + t0 / page_size] * page_size + t0 % page_size. One page table entry a page,
// loaded by every lane alike (one broadcast load) a tile before its page's first tile is copied;
// no per-key division and no vote.
// (PagedTileRows and tile_is_one_run were the whole paged MXFP4 overhead: without them the
// producer ran a16w4 at 32 x 4096 in 44.2 µs against 53.0 paged and 44.0 contiguous, device run 5
// of 2026-12-04.)
struct PagedTileStarts {
  static constexpr bool kPaged = true;
  int64_t page_base = 0;
  uint32_t page = 0, within = 0;  // tile t's page (its index in the request's) and first row in it
  int32_t entry = 0;              // kv_indices of `page`
  __device__ static bool apply(const AttentionArgs& a, const TokenKeys& k) {
    return a.page_size % kTileKeys == 0 && k.first % kTileKeys == 0;
  }
  __device__ void start(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k, int) {
    page_base = a.page_indptr[w.b];
    page = static_cast<uint32_t>(k.first) / static_cast<uint32_t>(a.page_size);
    within = static_cast<uint32_t>(k.first) % static_cast<uint32_t>(a.page_size);
    if (k.tiles > 0) entry = a.kv_indices[page_base + page];
  }
  // Tile t's first cache row, the tiles taken in order; the next page's entry loaded on the way.
  __device__ bool tile(const AttentionArgs& a, const TokenKeys& k, int t, int, int32_t (&)[2], int64_t& first_row) {
    first_row = common::page_row(a, entry, within);
    within += kTileKeys;
    if (within == static_cast<uint32_t>(a.page_size)) {
      within = 0;
      ++page;
      if (t + 1 < k.tiles) entry = a.kv_indices[page_base + page];
    }
    return true;
  }
};

// Any other paged split: each key's row (PagedTileRows), a tile in one run copied whole.
struct PagedRunTiles {
  static constexpr bool kPaged = true;
  PagedTileRows rows;
  __device__ void start(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k, int lane) {
    rows.start(a, w, k, lane);
  }
  __device__ bool tile(const AttentionArgs& a, const TokenKeys& k, int t, int lane, int32_t (&key_rows)[2],
                       int64_t& first_row) {
    rows.rows(a, k, t, lane, key_rows);
    int32_t first = 0;
    const bool whole = tile_is_one_run(key_rows, k.keys_in(t), lane, first);
    first_row = first;
    return whole;
  }
};

// The producer warp for an fp8 cache: every tile of every token, as kFp8Parts parts of
// kFp8PartRows rows, each into the next ring slot once its reader has released it. Only the tile's
// keys are copied (a part past them announces 0 bytes): a contiguous cache, and a paged tile whose
// rows are consecutive cache rows (PagedTileStarts where pages hold whole tiles, else
// tile_is_one_run), one bulk copy per part; another paged tile a
// copy per run of each part's rows in consecutive cache rows (part_run). The rows past
// the keys keep what the slot held: their scores are masked and their values stored as zeros
// (qk_decoded).
template <int Parts, class Tiles>
__device__ __forceinline__ void produce_fp8_tiles(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k,
                                                  unsigned char* ring, Barrier* full, Barrier* empty,
                                                  uint64_t policy, int lane, int& part) {
  Tiles tiles;
  tiles.start(a, w, k, lane);
  for (int t = 0; t < k.tiles; ++t) {
    const int n = k.keys_in(t);
    // The tile's first cache row where its rows are consecutive (`whole`), else each key's row.
    int32_t key_rows[2] = {0, 0};
    int64_t tile_row0 = 0;
    const bool whole = tiles.tile(a, k, t, lane, key_rows, tile_row0);
    for (int q = 0; q < kFp8Parts; ++q, ++part) {
      const int slot = ring_slot<Parts>(part);
      const int left = n - q * kFp8PartRows;
      const int rows = left < 0 ? 0 : left < kFp8PartRows ? left : kFp8PartRows;
      mma::bulk_barrier_wait(&empty[slot], ring_phase<Parts>(part) ^ 1);  // a fresh barrier's "previous" phase is done
      unsigned char* dst = ring + slot * kFp8PartBytes;
      if (lane == 0) mma::bulk_barrier_expect(&full[slot], static_cast<uint32_t>(rows * kFp8RowBytes));
      if (whole) {
        if (lane == 0 && rows > 0)
          sm90::bulk_copy(dst, a.kv_fp8 + (tile_row0 + q * kFp8PartRows) * kFp8RowBytes,
                          static_cast<uint32_t>(rows * kFp8RowBytes), &full[slot], policy);
      } else {
        const PartRun run = part_run(key_rows, q, rows, lane);
        __syncwarp();  // the bytes announced before any copy can land
        if (run.leads)
          sm90::bulk_copy(dst + lane * kFp8RowBytes, a.kv_fp8 + int64_t{run.row} * kFp8RowBytes,
                          static_cast<uint32_t>((run.end - lane) * kFp8RowBytes), &full[slot], policy);
      }
    }
  }
}

// Parts: the ring's (kFp8RingParts, or kE4m3RingParts for the all-fp8 recipes).
template <int Parts, bool Chunked>
__device__ void produce_fp8(const AttentionArgs& a, const ItemSource<Chunked>& items, unsigned char* ring,
                            Barrier* full, Barrier* empty) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const uint64_t policy = sm90::l2_evict_first_policy();  // the cache is read once
  int part = 0;
  for (TokenCursor<true, Chunked> c(a, items); c.more; c.advance(a)) {
    const TokenKeys k = c.w.token(c.i);
    if (a.kv_indices == nullptr)
      produce_fp8_tiles<Parts, ContiguousTiles>(a, c.w, k, ring, full, empty, policy, lane, part);
    else if (PagedTileStarts::apply(a, k))
      produce_fp8_tiles<Parts, PagedTileStarts>(a, c.w, k, ring, full, empty, policy, lane, part);
    else
      produce_fp8_tiles<Parts, PagedRunTiles>(a, c.w, k, ring, full, empty, policy, lane, part);
  }
}

// The producer warp for an MXFP4 cache: produce_fp8's parts, each of the part's code rows (288
// bytes) and their scale rows (18 bytes, from a 16-byte multiple: a contiguous part by one bulk
// copy, or at the array's end as many 128-byte boxes of the 1-D tensor map `map` as its skew and
// rows need; a paged tile in one run the same from its first row; another paged part the same per
// run of its rows in consecutive cache rows; paged: each row's offset in the slot stored) on the
// part's barrier. Bytes of a span or box past the part's rows (or the
// array's end) are the next rows' scales (or zeros): they belong to masked keys, like the stale
// codes of the rows past the keys (qk_decoded).
template <class Tiles>
__device__ __forceinline__ void produce_mxfp4_tiles(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k,
                                                    const CUtensorMap* map, unsigned char* ring, Barrier* full,
                                                    Barrier* empty, uint64_t policy, int lane, int& part) {
  constexpr bool paged = Tiles::kPaged;
  Tiles tiles;
  tiles.start(a, w, k, lane);
  for (int t = 0; t < k.tiles; ++t) {
    const int n = k.keys_in(t);
    // The tile's first cache row where its rows are consecutive (produce_fp8_tiles).
    int32_t key_rows[2] = {0, 0};
    int64_t tile_row0 = 0;
    const bool whole = tiles.tile(a, k, t, lane, key_rows, tile_row0);
    for (int q = 0; q < kFp8Parts; ++q, ++part) {
      const int slot = ring_slot<kMxfp4RingParts>(part);
      mma::bulk_barrier_wait(&empty[slot], ring_phase<kMxfp4RingParts>(part) ^ 1);
      const int left = n - q * kFp8PartRows;
      const int rows = left < 0 ? 0 : left < kFp8PartRows ? left : kFp8PartRows;
      unsigned char* dst = ring + slot * kMxPartBytes;
      unsigned char* scales = dst + kMxCodeBytes;
      if (whole) {
        const int64_t row0 = tile_row0 + q * kFp8PartRows;  // the part's first cache row
        const int skew = mx_scale_skew(row0);
        const int boxes = rows > 0 ? (skew + rows * kMxRowScales + kMxScaleBoxBytes - 1) / kMxScaleBoxBytes : 0;
        const int64_t start = row0 * kMxRowScales - skew;  // a 16-byte multiple
        // The part's scales from `start` in whole 16-byte units: one plain bulk copy where they
        // lie inside the scale array, else (the array's last bytes) the tensor map's boxes,
        // which land zeros past its end. The same bytes at the same place either way.
        const int span = rows > 0 ? mx_scale_span(skew, rows) : 0;
        const bool inside = start + span <= a.cache_rows * kMxRowScales;
        if (paged) {  // the owner of a paged part reads each row's scale offset (Mxfp4Rows::load)
          if (lane < kFp8PartRows)
            reinterpret_cast<uint16_t*>(scales + kMxRowOffsetsAt)[lane] =
                static_cast<uint16_t>(lane < rows ? skew + kMxRowScales * lane : 0);
          __syncwarp();  // stored before the barrier's arrival (release) by lane 0
        }
        if (lane == 0) {
          mma::bulk_barrier_expect(&full[slot], static_cast<uint32_t>(rows * kMxRowBytes +
                                                                      (inside ? span : boxes * kMxScaleBoxBytes)));
          if (rows > 0)
            sm90::bulk_copy(dst, a.kv_mxfp4 + row0 * kMxRowBytes, static_cast<uint32_t>(rows * kMxRowBytes),
                            &full[slot], policy);
          if (inside) {
            if (span > 0)
              sm90::bulk_copy(scales, a.kv_mxfp4_scale + start, static_cast<uint32_t>(span), &full[slot], policy);
          } else {
            for (int box = 0; box < boxes; ++box)
              sm90::tma_load_1d(scales + box * kMxScaleBoxBytes, map,
                                static_cast<int32_t>(start + box * kMxScaleBoxBytes), &full[slot], policy);
          }
        }
      } else {
        const PartRun run = part_run(key_rows, q, rows, lane);
        const int32_t row = run.row, first_row = run.first_row;
        const int first = run.first, end = run.end;
        const bool mine = run.mine;
        const int skew = mx_scale_skew(first_row);
        const int64_t start = int64_t{first_row} * kMxRowScales - skew;  // a 16-byte multiple
        const int span = mx_scale_span(skew, end - first);
        // The span ends at the 16-byte multiple above the run's last scale byte, so it reads past
        // the scale array's end only where the run ends at the cache's last row and the array's
        // 18 N bytes are no multiple of 16 (N % 8 != 0). It is then copied up to the array's last
        // 16-byte multiple, and the bytes after it by this lane's plain loads.
        const bool tail = first_row + (end - first) == a.cache_rows && a.cache_rows % 8 != 0;
        int copied = span;  // a 16-byte multiple, >= 0
        const bool leads = run.leads;
        unsigned char* room = scales + kMxPagedRowSpan * first;  // the run's spans land here
        if (leads && tail) {
          const int64_t whole_end = a.cache_rows * kMxRowScales / 16 * 16;
          copied = static_cast<int>(whole_end - start);
          for (int i = 0; i < static_cast<int>(a.cache_rows * kMxRowScales - whole_end); ++i)
            room[copied + i] = a.kv_mxfp4_scale[whole_end + i];
        }
        if (lane < kFp8PartRows)  // rows past the keys: 0, a byte of the slot (masked keys)
          reinterpret_cast<uint16_t*>(scales + kMxRowOffsetsAt)[lane] =
              static_cast<uint16_t>(mine ? kMxPagedRowSpan * first + skew + kMxRowScales * (lane - first) : 0);
        const uint32_t bytes =
            __reduce_add_sync(0xFFFFFFFFu, leads ? static_cast<uint32_t>((end - first) * kMxRowBytes + copied) : 0u);
        __syncwarp();  // the offsets and tail bytes stored before the barrier's arrival (release) by lane 0
        if (lane == 0) mma::bulk_barrier_expect(&full[slot], bytes);
        __syncwarp();  // the bytes announced before any copy can land
        if (leads) {
          // A 64-bit offset: row x 288 passes 2^31 from row 7456541 on (a cache of 2.1 GB of codes).
          sm90::bulk_copy(dst + lane * kMxRowBytes, a.kv_mxfp4 + int64_t{row} * kMxRowBytes,
                          static_cast<uint32_t>((end - first) * kMxRowBytes), &full[slot], policy);
          if (copied > 0)
            sm90::bulk_copy(room, a.kv_mxfp4_scale + start, static_cast<uint32_t>(copied), &full[slot], policy);
        }
      }
    }
  }
}

template <bool Chunked>
__device__ void produce_mxfp4(const AttentionArgs& a, const ItemSource<Chunked>& items, const CUtensorMap* map,
                              unsigned char* ring, Barrier* full, Barrier* empty) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const uint64_t policy = sm90::l2_evict_first_policy();  // the cache is read once
  int part = 0;
  for (TokenCursor<true, Chunked> c(a, items); c.more; c.advance(a)) {
    const TokenKeys k = c.w.token(c.i);
    if (a.kv_indices == nullptr)
      produce_mxfp4_tiles<ContiguousTiles>(a, c.w, k, map, ring, full, empty, policy, lane, part);
    else if (PagedTileStarts::apply(a, k))
      produce_mxfp4_tiles<PagedTileStarts>(a, c.w, k, map, ring, full, empty, policy, lane, part);
    else
      produce_mxfp4_tiles<PagedRunTiles>(a, c.w, k, map, ring, full, empty, policy, lane, part);
  }
}

}  // namespace
}  // namespace mlacheck::gpu::hopper
