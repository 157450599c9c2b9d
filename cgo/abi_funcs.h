// Function prototypes of the llama.cpp / ggml C API subset agentrl calls,
// mirroring the pinned ABI (see abi.h). TestABI re-declares these after the
// real headers, so any signature that drifts fails to compile.
#ifndef AGENTRL_ABI_FUNCS_H
#define AGENTRL_ABI_FUNCS_H

size_t                     ggml_backend_dev_count(void);
ggml_backend_dev_t         ggml_backend_dev_get(size_t index);
const char *               ggml_backend_dev_name(ggml_backend_dev_t device);
const char *               ggml_backend_dev_description(ggml_backend_dev_t device);
void                       ggml_backend_dev_memory(ggml_backend_dev_t device, size_t * free, size_t * total);
enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t device);
ggml_backend_reg_t         ggml_backend_dev_backend_reg(ggml_backend_dev_t device);
const char *               ggml_backend_reg_name(ggml_backend_reg_t reg);
void                       ggml_backend_load_all_from_path(const char * dir_path);
struct llama_model_params   llama_model_default_params(void);
struct llama_context_params llama_context_default_params(void);
void llama_backend_init(void);
void llama_log_set(ggml_log_callback log_callback, void * user_data);
const char * llama_print_system_info(void);
size_t llama_max_parallel_sequences(void);
bool llama_supports_gpu_offload(void);
struct llama_model * llama_model_load_from_file(const char * path_model, struct llama_model_params params);
void llama_model_free(struct llama_model * model);
const struct llama_vocab * llama_model_get_vocab(const struct llama_model * model);
int32_t  llama_model_n_ctx_train(const struct llama_model * model);
int32_t  llama_model_n_embd(const struct llama_model * model);
int32_t  llama_model_n_layer(const struct llama_model * model);
int32_t  llama_model_n_head(const struct llama_model * model);
int32_t  llama_model_n_head_kv(const struct llama_model * model);
uint64_t llama_model_n_params(const struct llama_model * model);
uint64_t llama_model_size(const struct llama_model * model);
bool     llama_model_has_encoder(const struct llama_model * model);
int32_t  llama_model_meta_val_str(const struct llama_model * model, const char * key, char * buf, size_t buf_size);
int32_t  llama_model_desc(const struct llama_model * model, char * buf, size_t buf_size);
const char * llama_model_chat_template(const struct llama_model * model, const char * name);
struct llama_context * llama_init_from_model(struct llama_model * model, struct llama_context_params params);
void     llama_free(struct llama_context * ctx);
uint32_t llama_n_ctx(const struct llama_context * ctx);
uint32_t llama_n_ctx_seq(const struct llama_context * ctx);
uint32_t llama_n_seq_max(const struct llama_context * ctx);
uint32_t llama_n_batch(const struct llama_context * ctx);
llama_memory_t llama_get_memory(const struct llama_context * ctx);
void llama_set_embeddings(struct llama_context * ctx, bool embeddings);
void llama_set_abort_callback(struct llama_context * ctx, ggml_abort_callback abort_callback, void * abort_callback_data);
struct llama_adapter_lora * llama_adapter_lora_init(struct llama_model * model, const char * path_lora);
int32_t llama_adapter_meta_val_str(const struct llama_adapter_lora * adapter, const char * key, char * buf, size_t buf_size);
void    llama_adapter_lora_free(struct llama_adapter_lora * adapter);
int32_t llama_set_adapter_lora(struct llama_context * ctx, struct llama_adapter_lora * adapter, float scale);
int32_t llama_rm_adapter_lora(struct llama_context * ctx, struct llama_adapter_lora * adapter);
void    llama_clear_adapter_lora(struct llama_context * ctx);
void      llama_memory_clear(llama_memory_t mem, bool data);
bool      llama_memory_seq_rm(llama_memory_t mem, llama_seq_id seq_id, llama_pos p0, llama_pos p1);
void      llama_memory_seq_cp(llama_memory_t mem, llama_seq_id seq_id_src, llama_seq_id seq_id_dst, llama_pos p0, llama_pos p1);
llama_pos llama_memory_seq_pos_max(llama_memory_t mem, llama_seq_id seq_id);
struct llama_batch llama_batch_init(int32_t n_tokens, int32_t embd, int32_t n_seq_max);
void    llama_batch_free(struct llama_batch batch);
int32_t llama_decode(struct llama_context * ctx, struct llama_batch batch);
void    llama_synchronize(struct llama_context * ctx);
float * llama_get_logits_ith(struct llama_context * ctx, int32_t i);
int32_t     llama_vocab_n_tokens(const struct llama_vocab * vocab);
bool        llama_vocab_is_eog(const struct llama_vocab * vocab, llama_token token);
bool        llama_vocab_is_control(const struct llama_vocab * vocab, llama_token token);
llama_token llama_vocab_bos(const struct llama_vocab * vocab);
llama_token llama_vocab_eos(const struct llama_vocab * vocab);
llama_token llama_vocab_eot(const struct llama_vocab * vocab);
int32_t llama_tokenize(const struct llama_vocab * vocab, const char * text, int32_t text_len, llama_token * tokens, int32_t n_tokens_max, bool add_special, bool parse_special);
int32_t llama_token_to_piece(const struct llama_vocab * vocab, llama_token token, char * buf, int32_t length, int32_t lstrip, bool special);
int32_t llama_detokenize(const struct llama_vocab * vocab, const llama_token * tokens, int32_t n_tokens, char * text, int32_t text_len_max, bool remove_special, bool unparse_special);
int32_t llama_chat_apply_template(const char * tmpl, const struct llama_chat_message * chat, size_t n_msg, bool add_ass, char * buf, int32_t length);

#endif
