// memtable.cc — arena skiplist.

#include "memtable.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "arena.h"
#include "hash.h"
#include "port.h"

namespace lsm {

void Memtable::Init(LsmMemtable* mt) {
  std::memset(mt, 0, sizeof(*mt));
  mt->max_height = 1;
  mt->rng = kMemtableSeed;
}

// xorshift64*: cheap, and its state is plain data in shared memory.
int Memtable::RandomHeight(uint64_t* rng) {
  int height = 1;
  uint64_t x = *rng;
  for (;;) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    uint64_t r = x * 0x2545F4914F6CDD1Dull;
    if (height >= kMaxHeight || (r >> 32) % kBranching != 0) break;
    height++;
  }
  *rng = x;
  return height;
}

uint32_t Memtable::PlaceNode(void* base, LsmMemtable* mt, const uint8_t* key,
                             size_t len, int height) {
  uint32_t node = mt->cur_chunk + mt->chunk_used;
  uint8_t* p = static_cast<uint8_t*>(base) + node;
  uint16_t klen = static_cast<uint16_t>(len);
  std::memcpy(p, &klen, sizeof(klen));
  p[2] = static_cast<uint8_t>(height);
  p[3] = 0;
  std::memset(p + kNodeHeaderSize, 0, 4 * height);
  if (len > 0) std::memcpy(p + kNodeHeaderSize + 4 * height, key, len);
  mt->chunk_used += NodeSize(len, height);
  return node;
}

LsmStatus Memtable::AddChunk(void* base, LsmMemtable* mt, uint32_t chunk) {
  if (!Arena::IsChunk(base, chunk)) return LSM_INVALID;
  uint8_t* b = static_cast<uint8_t*>(base);
  std::memset(b + chunk, 0, kChunkLinkSize);
  std::memcpy(b + chunk, &mt->first_chunk, sizeof(uint32_t));
  mt->first_chunk = chunk;
  mt->cur_chunk = chunk;
  mt->chunk_used = kChunkLinkSize;
  mt->nchunks++;
  if (mt->head == 0) {
    mt->head = PlaceNode(base, mt, nullptr, 0, kMaxHeight);
    mt->max_height = 1;
  }
  return LSM_OK;
}

uint32_t Memtable::FindGreaterOrEqual(const void* base, const LsmMemtable* mt,
                                      const uint8_t* key, size_t len,
                                      uint32_t* prev) {
  uint32_t x = mt->head;
  int level = static_cast<int>(mt->max_height) - 1;
  for (;;) {
    uint32_t next = NextArray(base, x)[level];
    if (next != 0) {
      Slice k = Key(base, next);
      if (CompareKeys(k.data, k.size, key, len) < 0) {
        x = next;
        continue;
      }
    }
    if (prev != nullptr) prev[level] = x;
    if (level == 0) return next;
    level--;
  }
}

LsmStatus Memtable::Insert(void* base, LsmMemtable* mt, const uint8_t* key,
                           size_t len) {
  if (base == nullptr || mt == nullptr || (key == nullptr && len > 0))
    return LSM_INVALID;
  if (len > LSM_MAX_KEY_SIZE) return LSM_TOO_LARGE;
  if (mt->head == 0) return LSM_NEED_CHUNK;
  if (mt->max_height < 1 || mt->max_height > kMaxHeight) return LSM_INVALID;

  uint32_t prev[kMaxHeight];
  uint32_t x = FindGreaterOrEqual(base, mt, key, len, prev);
  if (x != 0) {
    Slice k = Key(base, x);
    if (KeysEqual(k.data, k.size, key, len)) return LSM_OK;  // unique keys
  }

  // Decide the height on a copy of the state: NEED_CHUNK changes nothing, and
  // the retry draws the same height.
  uint64_t rng = mt->rng;
  int height = RandomHeight(&rng);
  uint32_t size = NodeSize(len, height);
  uint32_t chunk_size = Arena::ChunkSize(base);
  if (chunk_size == 0) return LSM_INVALID;
  if (mt->cur_chunk == 0 ||
      static_cast<uint64_t>(mt->chunk_used) + size > chunk_size)
    return LSM_NEED_CHUNK;

  mt->rng = rng;
  if (height > static_cast<int>(mt->max_height)) {
    for (int i = static_cast<int>(mt->max_height); i < height; i++)
      prev[i] = mt->head;
    mt->max_height = static_cast<uint32_t>(height);
  }
  uint32_t node = PlaceNode(base, mt, key, len, height);
  uint32_t* next = NextArray(base, node);
  for (int i = 0; i < height; i++) {
    uint32_t* pnext = NextArray(base, prev[i]);
    next[i] = pnext[i];
    pnext[i] = node;
  }
  mt->nentries++;
  mt->key_bytes += len;
  FilterAdd(base, mt, key, len);
  return LSM_OK;
}

// A search of a skiplist stalls on a cache miss at almost every node it
// visits, one after the other.  InsertMany runs the searches of its keys side
// by side, one step of each in turn, and prefetches the node each will look
// at next, so that their misses overlap (group prefetching).  The searches
// are of the list as it was; the keys are then linked in ascending order, and
// a key's predecessor at a level is the last key of this call linked there if
// both had the same predecessor in the old list (else the old one stands:
// it lies after every key linked there so far).
LsmStatus Memtable::InsertMany(void* base, LsmMemtable* mt,
                               const LsmKeyRef* keys, size_t n,
                               size_t* consumed) {
  *consumed = 0;
  if (n == 0) return LSM_OK;
  if (mt->max_height > kMaxHeight) return LSM_INVALID;
  const uint32_t chunk_size = Arena::ChunkSize(base);
  if (chunk_size == 0) return LSM_INVALID;

  // 1. The keys that fit in the current chunk, and their heights.
  int height[kInsertManyMax];
  uint64_t rng = mt->rng;
  uint64_t used = mt->chunk_used;
  size_t m = 0;
  for (; m < n && m < kInsertManyMax; m++) {
    const LsmKeyRef& k = keys[m];
    LsmStatus bad = LSM_OK;
    if (k.len < 0 || (k.key == nullptr && k.len > 0))
      bad = LSM_INVALID;
    else if (static_cast<size_t>(k.len) > LSM_MAX_KEY_SIZE)
      bad = LSM_TOO_LARGE;
    if (bad != LSM_OK) {
      if (m == 0) return bad;
      break;
    }
    if (mt->head == 0 || mt->cur_chunk == 0 || mt->max_height < 1) break;
    uint64_t r = rng;
    int h = RandomHeight(&r);
    uint32_t size = NodeSize(static_cast<size_t>(k.len), h);
    if (used + size > chunk_size) break;
    used += size;
    rng = r;
    height[m] = h;
  }
  if (m == 0) return LSM_NEED_CHUNK;

  // 2. Their order.
  uint8_t order[kInsertManyMax];
  for (size_t j = 0; j < m; j++) order[j] = static_cast<uint8_t>(j);
  std::sort(order, order + m, [keys](uint8_t a, uint8_t b) {
    return CompareKeys(keys[a].key, keys[a].len, keys[b].key, keys[b].len) < 0;
  });

  // 3. The searches, side by side: search j (of the j-th smallest key) is at
  // node x[j] on level[j], and looks at cand[j], x's successor there, next.
  const uint8_t* const b = static_cast<const uint8_t*>(base);
  uint32_t prev[kInsertManyMax][kMaxHeight];
  uint32_t x[kInsertManyMax], cand[kInsertManyMax];
  int level[kInsertManyMax];
  const int top = static_cast<int>(mt->max_height) - 1;
  for (size_t j = 0; j < m; j++) {
    for (int l = top + 1; l < kMaxHeight; l++) prev[j][l] = mt->head;
    x[j] = mt->head;
    level[j] = top;
    cand[j] = NextArray(base, mt->head)[top];
  }
  for (size_t active = m; active > 0;) {
    for (size_t j = 0; j < m; j++) {
      if (level[j] < 0) continue;
      const LsmKeyRef& k = keys[order[j]];
      const uint32_t c = cand[j];
      if (c != 0) {
        Slice ck = Key(base, c);
        if (CompareKeys(ck.data, ck.size, k.key, k.len) < 0) {
          x[j] = c;
          cand[j] = NextArray(base, c)[level[j]];
          if (cand[j] != 0) __builtin_prefetch(b + cand[j]);
          continue;
        }
      }
      prev[j][level[j]] = x[j];
      if (level[j] == 0) {
        level[j] = -1;  // done: cand[j] is the first node >= the key
        active--;
        continue;
      }
      level[j]--;
      cand[j] = NextArray(base, x[j])[level[j]];
      if (cand[j] != 0) __builtin_prefetch(b + cand[j]);
    }
  }

  // 4. Link them in ascending order.
  mt->rng = rng;
  uint32_t last[kMaxHeight] = {0}, last_prev[kMaxHeight] = {0};
  const LsmKeyRef* before = nullptr;
  for (size_t j = 0; j < m; j++) {
    const LsmKeyRef& k = keys[order[j]];
    const size_t len = static_cast<size_t>(k.len);
    bool dup = before != nullptr &&
               KeysEqual(before->key, before->len, k.key, len);  // twice here
    before = &k;
    if (!dup && cand[j] != 0) {
      Slice ck = Key(base, cand[j]);
      dup = KeysEqual(ck.data, ck.size, k.key, len);  // already present
    }
    if (dup) continue;
    const int h = height[order[j]];
    if (h > static_cast<int>(mt->max_height))
      mt->max_height = static_cast<uint32_t>(h);
    uint32_t node = PlaceNode(base, mt, k.key, len, h);
    uint32_t* next = NextArray(base, node);
    for (int l = 0; l < h; l++) {
      uint32_t p = prev[j][l];
      if (last[l] != 0 && last_prev[l] == p) p = last[l];
      uint32_t* pnext = NextArray(base, p);
      next[l] = pnext[l];
      pnext[l] = node;
      last[l] = node;
      last_prev[l] = prev[j][l];
    }
    mt->nentries++;
    mt->key_bytes += len;
    FilterAdd(base, mt, k.key, len);
  }
  *consumed = m;
  return LSM_OK;
}

LsmStatus Memtable::InsertLog(void* base, LsmMemtable* mt,
                              const uint8_t* content, size_t len,
                              size_t* pos) {
  LsmKeyRef keys[kInsertManyMax];
  size_t ends[kInsertManyMax];  // where each entry ends in content
  while (*pos < len) {
    // the next entries (up to the first malformed one), then InsertMany
    size_t n = 0;
    for (size_t p = *pos; p < len && n < kInsertManyMax; n++) {
      uint16_t klen;
      if (len - p < sizeof(klen)) break;
      std::memcpy(&klen, content + p, sizeof(klen));  // native order (the shim's)
      if (klen == 0 || len - p - sizeof(klen) < klen) break;
      keys[n].key = content + p + sizeof(klen);
      keys[n].len = klen;
      p += sizeof(klen) + klen;
      ends[n] = p;
    }
    if (n == 0) return LSM_CORRUPT;  // the entry at *pos
    size_t consumed = 0;
    LsmStatus st = InsertMany(base, mt, keys, n, &consumed);
    if (consumed > 0) *pos = ends[consumed - 1];
    if (st != LSM_OK) return st;
  }
  return LSM_OK;
}

LsmStatus Memtable::AddFilter(void* base, LsmMemtable* mt, uint32_t suffix,
                              const uint32_t* chunks, uint32_t n) {
  if (mt->nentries != 0 || mt->filter != 0) return LSM_INVALID;
  if (n < 1 || n > kMaxFilterChunks) return LSM_INVALID;
  uint32_t size = Arena::ChunkSize(base);
  if (size < kFilterDataOffset + (kFilterDirBlocks + 1) * kFilterBlockBytes)
    return LSM_INVALID;
  const uint8_t* cb = static_cast<const uint8_t*>(base);
  for (uint32_t i = 0; i < n; i++) {
    if (!Arena::IsChunk(base, chunks[i])) return LSM_INVALID;
    for (uint32_t j = 0; j < i; j++)
      if (chunks[j] == chunks[i]) return LSM_INVALID;
    // not one of the memtable's data chunks (bounded: a damaged chain)
    uint32_t c = mt->first_chunk;
    for (uint32_t k = 0; c != 0 && k < mt->nchunks; k++) {
      if (c == chunks[i]) return LSM_INVALID;
      std::memcpy(&c, cb + c, sizeof(c));
    }
  }
  uint8_t* b = static_cast<uint8_t*>(base);
  for (uint32_t i = 0; i < n; i++) std::memset(b + chunks[i], 0, size);
  uint8_t* dir = b + chunks[0] + kFilterDataOffset;
  std::memcpy(dir, &n, sizeof(n));
  std::memcpy(dir + sizeof(n), chunks, n * sizeof(uint32_t));
  mt->filter = chunks[0] + kFilterDataOffset;
  mt->filter_suffix = suffix;
  return LSM_OK;
}

uint32_t Memtable::FilterChunks(const void* base, const LsmMemtable* mt) {
  if (mt->filter == 0) return 0;
  uint32_t n;
  std::memcpy(&n, static_cast<const uint8_t*>(base) + mt->filter, sizeof(n));
  return n >= 1 && n <= kMaxFilterChunks ? n : 0;
}

uint32_t Memtable::FilterChunk(const void* base, const LsmMemtable* mt, uint32_t i) {
  uint32_t chunk;
  std::memcpy(&chunk,
              static_cast<const uint8_t*>(base) + mt->filter + sizeof(uint32_t) * (1 + i),
              sizeof(chunk));
  return chunk;
}

const uint8_t* Memtable::FilterBlock(const void* base, const LsmMemtable* mt,
                                     uint64_t h, uint32_t bits[4]) {
  const uint32_t n = FilterChunks(base, mt);
  if (n == 0) return nullptr;
  const uint32_t per = (Arena::ChunkSize(base) - kFilterDataOffset) / kFilterBlockBytes;
  // the block from the low half (multiply-shift over every block but the
  // directory's: no modulo), the bits from a remix of the whole hash, 9 bits
  // each (512 bits a block)
  const uint32_t total = n * per - kFilterDirBlocks;
  const uint32_t g = kFilterDirBlocks +
                     static_cast<uint32_t>((static_cast<uint64_t>(static_cast<uint32_t>(h)) *
                                            total) >> 32);
  const uint32_t chunk = FilterChunk(base, mt, g / per);
  uint64_t x = h * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 4; i++) bits[i] = static_cast<uint32_t>(x >> (64 - 9 * (i + 1))) & 511;
  return static_cast<const uint8_t*>(base) + chunk + kFilterDataOffset +
         static_cast<size_t>(g % per) * kFilterBlockBytes;
}

void Memtable::FilterAdd(void* base, LsmMemtable* mt, const uint8_t* key,
                         size_t len) {
  if (mt->filter == 0 || len < mt->filter_suffix) return;
  uint32_t bits[4];
  uint8_t* b = const_cast<uint8_t*>(
      FilterBlock(base, mt, Hash64(key, len - mt->filter_suffix, kFilterSeed), bits));
  if (b == nullptr) return;
  for (int i = 0; i < 4; i++) b[bits[i] >> 3] |= static_cast<uint8_t>(1u << (bits[i] & 7));
}

bool Memtable::MayContain(const void* base, const LsmMemtable* mt,
                          const uint8_t* prefix, size_t len) {
  if (mt->filter == 0) return true;
  uint32_t bits[4];
  const uint8_t* b = FilterBlock(base, mt, Hash64(prefix, len, kFilterSeed), bits);
  if (b == nullptr) return true;
  for (int i = 0; i < 4; i++)
    if ((b[bits[i] >> 3] & (1u << (bits[i] & 7))) == 0) return false;
  return true;
}

void Memtable::Release(void* base, LsmMemtable* mt) {
  const uint8_t* b = static_cast<const uint8_t*>(base);
  uint32_t c = mt->first_chunk;
  if (mt->filter != 0) {
    // the other chunks from the directory, then the directory's own
    for (uint32_t i = FilterChunks(base, mt); i > 1; i--)
      Arena::FreeChunk(base, FilterChunk(base, mt, i - 1));
    Arena::FreeChunk(base, mt->filter - kFilterDataOffset);
  }
  // Bounded by nchunks so that a damaged chain cannot loop forever.
  for (uint32_t i = 0; c != 0 && i < mt->nchunks; i++) {
    uint32_t next;
    std::memcpy(&next, b + c, sizeof(next));
    Arena::FreeChunk(base, c);
    c = next;
  }
  Init(mt);
}

uint64_t Memtable::Memory(const void* base, const LsmMemtable* mt) {
  return static_cast<uint64_t>(mt->nchunks) * Arena::ChunkSize(base);
}

uint32_t Memtable::Seek(const void* base, const LsmMemtable* mt,
                        const uint8_t* target, size_t tlen) {
  if (mt->head == 0 || mt->max_height < 1 || mt->max_height > kMaxHeight)
    return 0;
  if (target == nullptr) return Next(base, mt->head);
  return FindGreaterOrEqual(base, mt, target, tlen, nullptr);
}

LsmStatus Memtable::CopyRange(const void* base, const LsmMemtable* mt,
                              const uint8_t* lo, size_t lolen,
                              const uint8_t* hi, size_t hilen, Batch* b) {
  for (uint32_t x = Seek(base, mt, lo, lolen); x != 0; x = Next(base, x)) {
    Slice k = Key(base, x);
    if (hi != nullptr && BeyondPrefixUpper(k.data, k.size, hi, hilen)) break;
    b->Add(k.data, k.size);
  }
  return LSM_OK;
}

uint32_t Memtable::FindLessThan(const void* base, const LsmMemtable* mt,
                                const uint8_t* key, size_t len) {
  uint32_t x = mt->head;
  int level = static_cast<int>(mt->max_height) - 1;
  for (;;) {
    uint32_t next = NextArray(base, x)[level];
    if (next != 0) {
      Slice k = Key(base, next);
      if (key == nullptr || CompareKeys(k.data, k.size, key, len) < 0) {
        x = next;
        continue;
      }
    }
    if (level == 0) return x == mt->head ? 0 : x;
    level--;
  }
}

LsmStatus Memtable::CopyChunk(const void* base, const LsmMemtable* mt,
                              bool backward, const uint8_t* lo, size_t lolen,
                              const uint8_t* hi, size_t hilen,
                              const uint8_t* resume, size_t rlen, size_t max,
                              Batch* b, int* more) {
  *more = 0;
  if (mt->head == 0 || mt->max_height < 1 || mt->max_height > kMaxHeight ||
      max == 0)
    return max == 0 ? LSM_INVALID : LSM_OK;
  if (!backward) {
    uint32_t x;
    if (resume != nullptr) {
      x = FindGreaterOrEqual(base, mt, resume, rlen, nullptr);
      if (x != 0) {
        Slice k = Key(base, x);
        if (KeysEqual(k.data, k.size, resume, rlen)) x = Next(base, x);
      }
    } else {
      x = Seek(base, mt, lo, lolen);
    }
    for (size_t n = 0; x != 0; x = Next(base, x), n++) {
      Slice k = Key(base, x);
      if (hi != nullptr && BeyondPrefixUpper(k.data, k.size, hi, hilen)) break;
      if (n == max) {
        *more = 1;
        break;
      }
      b->Add(k.data, k.size);
    }
    return LSM_OK;
  }

  // Backward: the keys closest below resume (or the last within hi).
  uint32_t x;
  if (resume != nullptr) {
    x = FindLessThan(base, mt, resume, rlen);
  } else if (hi != nullptr) {
    // keys whose first hilen bytes are <= hi: those < hi's prefix successor
    size_t n = hilen;
    while (n > 0 && hi[n - 1] == 0xFF) n--;
    if (n == 0) {
      x = FindLessThan(base, mt, nullptr, 0);
    } else {
      uint8_t succ[LSM_MAX_KEY_SIZE + 1];
      if (n > sizeof(succ)) return LSM_TOO_LARGE;
      std::memcpy(succ, hi, n);
      succ[n - 1]++;
      x = FindLessThan(base, mt, succ, n);
    }
  } else {
    x = FindLessThan(base, mt, nullptr, 0);
  }
  if (x == 0) return LSM_OK;
  // The max + 1 nodes ending at x, without a search from the top per node
  // (the list has no back links): walk level 0 forward to x from a node
  // that precedes it at a higher level, a higher level (farther back, about
  // kBranching^level nodes) until the walk covers max + 1 nodes or starts at
  // the head.  The last max + 1 nodes of the walk are kept in a ring.
  const Slice xk = Key(base, x);
  uint32_t preds[kMaxHeight];
  {
    uint32_t p = mt->head;
    for (int level = static_cast<int>(mt->max_height) - 1; level >= 0; level--) {
      for (;;) {
        uint32_t next = NextArray(base, p)[level];
        if (next == 0) break;
        Slice k = Key(base, next);
        if (CompareKeys(k.data, k.size, xk.data, xk.size) >= 0) break;
        p = next;
      }
      preds[level] = p;  // last node before x at this level (or the head)
    }
  }
  const size_t want = max + 1;
  std::vector<uint32_t> ring(want);
  size_t count = 0;
  for (int level = 1;; level++) {
    const uint32_t from =
        level < static_cast<int>(mt->max_height) ? preds[level] : mt->head;
    bool reached = false;
    count = 0;
    for (uint32_t y = from == mt->head ? Next(base, from) : from; y != 0;
         y = Next(base, y)) {
      ring[count % want] = y;
      count++;
      if (y == x) {
        reached = true;
        break;
      }
    }
    if (!reached) return LSM_CORRUPT;  // x follows every node before it
    if (count >= want || from == mt->head) break;
  }
  // ring holds the last min(count, want) nodes, x last: take them backward
  std::vector<uint32_t> nodes;
  for (size_t i = 0; i < count && i < want; i++) {
    uint32_t y = ring[(count - 1 - i) % want];
    Slice k = Key(base, y);
    if (lo != nullptr && CompareKeys(k.data, k.size, lo, lolen) < 0) break;
    if (nodes.size() == max) {
      *more = 1;
      break;
    }
    nodes.push_back(y);
  }
  for (size_t i = nodes.size(); i-- > 0;) {
    Slice k = Key(base, nodes[i]);
    b->Add(k.data, k.size);
  }
  return LSM_OK;
}

}  // namespace lsm
