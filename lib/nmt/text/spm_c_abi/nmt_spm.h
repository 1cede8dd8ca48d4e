#ifndef NMT_TEXT_SPM_C_ABI_NMT_SPM_H_
#define NMT_TEXT_SPM_C_ABI_NMT_SPM_H_
/* libnmt_spm: SentencePiece behind a C ABI of the project's own.
 *
 * Why: Debian's libsentencepiece bundles and exports protobuf-lite 3.14 while LibTorch needs the
 * system libprotobuf 3.21, so SentencePiece must live in its own symbol scope (dlopen with
 * RTLD_LOCAL | RTLD_DEEPBIND; see nmt/text/subword.cc). Calling its C++ classes across that
 * boundary meant hard-coding mangled names of one SentencePiece version, which a new version
 * broke at run time. This library is compiled against <sentencepiece_processor.h> and
 * <sentencepiece_trainer.h> and linked against libsentencepiece: a changed SentencePiece API is a
 * build error here, and only the plain C functions below cross the boundary (no C++ types, no
 * exceptions; everything else is hidden by -fvisibility=hidden and the version script).
 *
 * Conventions: functions that can fail return 0 on success and non-zero on failure, in which case
 * *error (when error is not NULL) receives a NUL-terminated message that the caller releases with
 * nmt_spm_free. Buffers returned through out-parameters are likewise released with nmt_spm_free.
 * Strings are byte ranges (pointer + length), UTF-8, not necessarily NUL-terminated. */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a signature below changes; nmt refuses a library of another version. */
#define NMT_SPM_ABI_VERSION 1
int nmt_spm_abi_version(void);

typedef struct nmt_spm_processor nmt_spm_processor;

void nmt_spm_free(void* buffer);

/* A processor for the serialized ModelProto `bytes`; *out is released with nmt_spm_processor_free. */
int nmt_spm_load(const char* bytes, size_t size, nmt_spm_processor** out, char** error);
void nmt_spm_processor_free(nmt_spm_processor* processor);

int nmt_spm_piece_size(const nmt_spm_processor* processor);
/* Special ids as the model declares them (-1 when absent). */
void nmt_spm_special_ids(const nmt_spm_processor* processor, int* pad, int* unk, int* bos, int* eos);
/* The piece of `id` (0 <= id < piece size), valid as long as the processor lives. */
void nmt_spm_id_to_piece(const nmt_spm_processor* processor, int id, const char** piece, size_t* size);
int nmt_spm_piece_to_id(const nmt_spm_processor* processor, const char* piece, size_t size);
float nmt_spm_score(const nmt_spm_processor* processor, int id);
/* ModelProto.SentencePiece.Type of `id`: 1 normal, 2 unknown, 3 control, 5 unused, 6 byte. User-defined
 * pieces (4) read as normal: SentencePiece's processor API does not tell them apart. */
int nmt_spm_piece_type(const nmt_spm_processor* processor, int id);

/* *ids: a buffer of *count ids. */
int nmt_spm_encode(const nmt_spm_processor* processor, const char* text, size_t size, int** ids, size_t* count,
                   char** error);
/* One segmentation sampled as SentencePiece's SampleEncode does (nbest_size < 0: the whole
 * lattice, > 1: among the n best, with weights exp(alpha * score) computed without SentencePiece
 * 0.1.97's underflow, 0 or 1: the best; BPE: alpha is the merge-dropout probability),
 * drawn from a generator seeded with `seed` for this call alone: the result depends on
 * (text, nbest_size, alpha, seed) only, not on earlier calls or on the calling thread. */
int nmt_spm_sample_encode(const nmt_spm_processor* processor, const char* text, size_t size, int nbest_size,
                          float alpha, uint32_t seed, int** ids, size_t* count, char** error);
/* *text: a NUL-terminated buffer of *size bytes (the NUL not counted). */
int nmt_spm_decode(const nmt_spm_processor* processor, const int* ids, size_t count, char** text, size_t* size,
                   char** error);

/* Trains a model on `sentences` (count byte ranges) with SentencePiece's trainer flags given as
 * `nargs` key/value pairs (e.g. "model_type" = "unigram"; no "input": the sentences are fed
 * through an iterator, so nothing of the caller's file system ends up in the model). The
 * process-wide seed of SentencePiece's generator is set to `seed` first. *model receives the
 * serialized ModelProto (*model_size bytes). */
int nmt_spm_train(const char* const* keys, const char* const* values, size_t nargs, const char* const* sentences,
                  const size_t* sizes, size_t count, uint32_t seed, char** model, size_t* model_size, char** error);

#ifdef __cplusplus
}
#endif
#endif /* NMT_TEXT_SPM_C_ABI_NMT_SPM_H_ */
