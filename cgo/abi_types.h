// Types, enums and structs of the llama.cpp / ggml C API subset agentrl uses,
// mirroring the pinned ABI (see abi.h).
#ifndef AGENTRL_ABI_TYPES_H
#define AGENTRL_ABI_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---- ggml.h ----
enum ggml_type {
    GGML_TYPE_F32  = 0,
    GGML_TYPE_F16  = 1,
    GGML_TYPE_Q8_0 = 8,
    GGML_TYPE_I32  = 26,
    GGML_TYPE_BF16 = 30,
    GGML_TYPE_COUNT = 40,
};

enum ggml_log_level {
    GGML_LOG_LEVEL_NONE  = 0,
    GGML_LOG_LEVEL_DEBUG = 1,
    GGML_LOG_LEVEL_INFO  = 2,
    GGML_LOG_LEVEL_WARN  = 3,
    GGML_LOG_LEVEL_ERROR = 4,
    GGML_LOG_LEVEL_CONT  = 5,
};

struct ggml_tensor;
typedef bool (*ggml_abort_callback)(void * data);

typedef void (*ggml_to_float_t)  (const void * x, float * y, int64_t k);
typedef void (*ggml_from_float_t)(const float * x, void * y, int64_t k);

struct ggml_type_traits {
    const char        * type_name;
    int64_t             blck_size;
    int64_t             blck_size_interleave;
    size_t              type_size;
    bool                is_quantized;
    ggml_to_float_t     to_float;
    ggml_from_float_t   from_float_ref;
};
typedef void (*ggml_log_callback)(enum ggml_log_level level, const char * text, void * user_data);

// ---- ggml-backend.h ----
typedef struct ggml_backend_device * ggml_backend_dev_t;
typedef struct ggml_backend_reg * ggml_backend_reg_t;
typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
typedef bool (*ggml_backend_sched_eval_callback)(struct ggml_tensor * t, bool ask, void * user_data);

enum ggml_backend_dev_type {
    GGML_BACKEND_DEVICE_TYPE_CPU   = 0,
    GGML_BACKEND_DEVICE_TYPE_GPU   = 1,
    GGML_BACKEND_DEVICE_TYPE_IGPU  = 2,
    GGML_BACKEND_DEVICE_TYPE_ACCEL = 3,
};


// ---- llama.h ----
typedef int32_t llama_pos;
typedef int32_t llama_token;
typedef int32_t llama_seq_id;

struct llama_vocab;
struct llama_model;
struct llama_context;
struct llama_adapter_lora;
typedef struct llama_memory_i * llama_memory_t;
struct llama_model_tensor_buft_override;
struct llama_model_kv_override;

enum llama_split_mode {
    LLAMA_SPLIT_MODE_NONE  = 0,
    LLAMA_SPLIT_MODE_LAYER = 1,
    LLAMA_SPLIT_MODE_ROW   = 2,
};

enum llama_rope_scaling_type {
    LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED = -1,
};

enum llama_pooling_type {
    LLAMA_POOLING_TYPE_UNSPECIFIED = -1,
    LLAMA_POOLING_TYPE_NONE        = 0,
};

enum llama_attention_type {
    LLAMA_ATTENTION_TYPE_UNSPECIFIED = -1,
    LLAMA_ATTENTION_TYPE_CAUSAL      = 0,
};

enum llama_flash_attn_type {
    LLAMA_FLASH_ATTN_TYPE_AUTO     = -1,
    LLAMA_FLASH_ATTN_TYPE_DISABLED = 0,
    LLAMA_FLASH_ATTN_TYPE_ENABLED  = 1,
};

typedef bool (*llama_progress_callback)(float progress, void * user_data);

struct llama_model_params {
    ggml_backend_dev_t * devices;
    const struct llama_model_tensor_buft_override * tensor_buft_overrides;
    int32_t n_gpu_layers;
    enum llama_split_mode split_mode;
    int32_t main_gpu;
    const float * tensor_split;
    llama_progress_callback progress_callback;
    void * progress_callback_user_data;
    const struct llama_model_kv_override * kv_overrides;
    bool vocab_only;
    bool use_mmap;
    bool use_mlock;
    bool check_tensors;
    bool use_extra_bufts;
    bool no_host;
    bool no_alloc;
};

struct llama_context_params {
    uint32_t n_ctx;
    uint32_t n_batch;
    uint32_t n_ubatch;
    uint32_t n_seq_max;
    int32_t  n_threads;
    int32_t  n_threads_batch;
    enum llama_rope_scaling_type rope_scaling_type;
    enum llama_pooling_type      pooling_type;
    enum llama_attention_type    attention_type;
    enum llama_flash_attn_type   flash_attn_type;
    float    rope_freq_base;
    float    rope_freq_scale;
    float    yarn_ext_factor;
    float    yarn_attn_factor;
    float    yarn_beta_fast;
    float    yarn_beta_slow;
    uint32_t yarn_orig_ctx;
    float    defrag_thold;
    ggml_backend_sched_eval_callback cb_eval;
    void * cb_eval_user_data;
    enum ggml_type type_k;
    enum ggml_type type_v;
    ggml_abort_callback abort_callback;
    void *              abort_callback_data;
    bool embeddings;
    bool offload_kqv;
    bool no_perf;
    bool op_offload;
    bool swa_full;
    bool kv_unified;
};

typedef struct llama_batch {
    int32_t n_tokens;
    llama_token  *  token;
    float        *  embd;
    llama_pos    *  pos;
    int32_t      *  n_seq_id;
    llama_seq_id ** seq_id;
    int8_t       *  logits;
} llama_batch;

enum llama_ftype {
    LLAMA_FTYPE_ALL_F32        = 0,
    LLAMA_FTYPE_MOSTLY_F16     = 1,
    LLAMA_FTYPE_MOSTLY_Q4_0    = 2,
    LLAMA_FTYPE_MOSTLY_Q4_1    = 3,
    LLAMA_FTYPE_MOSTLY_Q8_0    = 7,
    LLAMA_FTYPE_MOSTLY_Q5_0    = 8,
    LLAMA_FTYPE_MOSTLY_Q5_1    = 9,
    LLAMA_FTYPE_MOSTLY_Q2_K    = 10,
    LLAMA_FTYPE_MOSTLY_Q3_K_S  = 11,
    LLAMA_FTYPE_MOSTLY_Q3_K_M  = 12,
    LLAMA_FTYPE_MOSTLY_Q3_K_L  = 13,
    LLAMA_FTYPE_MOSTLY_Q4_K_S  = 14,
    LLAMA_FTYPE_MOSTLY_Q4_K_M  = 15,
    LLAMA_FTYPE_MOSTLY_Q5_K_S  = 16,
    LLAMA_FTYPE_MOSTLY_Q5_K_M  = 17,
    LLAMA_FTYPE_MOSTLY_Q6_K    = 18,
    LLAMA_FTYPE_MOSTLY_BF16    = 32,
};

typedef struct llama_model_quantize_params {
    int32_t nthread;
    enum llama_ftype ftype;
    enum ggml_type output_tensor_type;
    enum ggml_type token_embedding_type;
    bool allow_requantize;
    bool quantize_output_tensor;
    bool only_copy;
    bool pure;
    bool keep_split;
    void * imatrix;
    void * kv_overrides;
    void * tensor_types;
    void * prune_layers;
} llama_model_quantize_params;

typedef struct llama_chat_message {
    const char * role;
    const char * content;
} llama_chat_message;

// ---- ggml.h: tensors and graphs (the trainer) ----
#define GGML_MAX_DIMS      4
#define GGML_MAX_SRC       10
#define GGML_MAX_OP_PARAMS 64
#define GGML_MAX_NAME      64

// Only the value the bindings test for; the field it types is read whole.
enum ggml_op {
    GGML_OP_NONE = 0,
};

enum ggml_status {
    GGML_STATUS_ALLOC_FAILED = -2,
    GGML_STATUS_FAILED       = -1,
    GGML_STATUS_SUCCESS      = 0,
    GGML_STATUS_ABORTED      = 1,
};

enum ggml_tensor_flag {
    GGML_TENSOR_FLAG_INPUT  = 1,
    GGML_TENSOR_FLAG_OUTPUT = 2,
    GGML_TENSOR_FLAG_PARAM  = 4,
    GGML_TENSOR_FLAG_LOSS   = 8,
};

struct ggml_context;
struct ggml_cgraph;
struct ggml_backend_buffer;

struct ggml_init_params {
    size_t mem_size;
    void * mem_buffer;
    bool   no_alloc;
};

struct ggml_tensor {
    enum ggml_type type;
    struct ggml_backend_buffer * buffer;
    int64_t ne[GGML_MAX_DIMS];
    size_t  nb[GGML_MAX_DIMS];
    enum ggml_op op;
    int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];
    int32_t flags;
    struct ggml_tensor * src[GGML_MAX_SRC];
    struct ggml_tensor * view_src;
    size_t               view_offs;
    void * data;
    char name[GGML_MAX_NAME];
    void * extra;
    char padding[8];
};

// A custom operation's kernel, run by each of nth threads (ggml_custom_4d).
typedef void (*ggml_custom_op_t)(struct ggml_tensor * dst, int ith, int nth, void * userdata);
#define GGML_N_TASKS_MAX (-1)

// ---- ggml-backend.h / ggml-alloc.h: backends, buffers, graph allocation ----
typedef struct ggml_backend * ggml_backend_t;
typedef struct ggml_backend_buffer * ggml_backend_buffer_t;
typedef struct ggml_gallocr * ggml_gallocr_t;

#endif
