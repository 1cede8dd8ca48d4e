#include "nmt/models/fused_recurrent.h"

#include <ATen/Parallel.h>

#include "nmt/kernels/fused_switch.h"
#include "nmt/kernels/recurrent.h"

namespace nmt::models {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows per task: a GRU row is ~3 µs of work, an attention row S·H tanh.
constexpr int64_t kCellGrain = 16, kScoreGrain = 4;

class FusedGruCell : public torch::autograd::Function<FusedGruCell> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input_gates_in,
                               const torch::Tensor& hidden_gates_in, const torch::Tensor& h_in,
                               const torch::Tensor& active_in) {
    auto input_gates = input_gates_in.contiguous(), hidden_gates = hidden_gates_in.contiguous();
    auto h = h_in.contiguous();
    const int64_t rows = h.size(0), H = h.size(1);
    TORCH_CHECK(input_gates.size(0) == rows && input_gates.size(1) == 3 * H && hidden_gates.sizes() == input_gates.sizes(),
                "fused GRU cell: gates ", input_gates.sizes(), " and ", hidden_gates.sizes(), " for h ", h.sizes());
    torch::Tensor active;  // empty: every row
    if (active_in.numel() > 0) {
      active = active_in.to(torch::kUInt8).contiguous();
      TORCH_CHECK(active.numel() == rows, "fused GRU cell: ", active.numel(), " row flags for ", rows, " rows");
    }
    auto h_next = torch::empty_like(h);
    auto saved = torch::empty({rows, 4 * H}, h.options());
    const auto kernel = kernels::best_recurrent_kernel();
    const float *gi = input_gates.data_ptr<float>(), *gh = hidden_gates.data_ptr<float>(), *hp = h.data_ptr<float>();
    const uint8_t* on = active.defined() ? active.data_ptr<uint8_t>() : nullptr;
    float *out = h_next.data_ptr<float>(), *s = saved.data_ptr<float>();
    at::parallel_for(0, rows, kCellGrain, [&](int64_t begin, int64_t end) {
      kernels::gru_cell_forward(gi, gh, hp, on, H, begin, end, out, s, kernel);
    });
    ctx->save_for_backward({h, saved, active.defined() ? active : active_in});
    return h_next;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& h = saved[0];
    const torch::Tensor& work = saved[1];
    const torch::Tensor& active = saved[2];
    auto grad_next = grad_outputs[0].contiguous();
    const int64_t rows = h.size(0), H = h.size(1);
    auto grad_input = torch::empty({rows, 3 * H}, h.options());
    auto grad_hidden = torch::empty({rows, 3 * H}, h.options());
    auto grad_h = torch::empty_like(h);
    const float *g = grad_next.data_ptr<float>(), *hp = h.data_ptr<float>(), *s = work.data_ptr<float>();
    float *gi = grad_input.data_ptr<float>(), *gh = grad_hidden.data_ptr<float>(), *dh = grad_h.data_ptr<float>();
    const uint8_t* on = active.numel() > 0 ? active.data_ptr<uint8_t>() : nullptr;
    at::parallel_for(0, rows, kCellGrain, [&](int64_t begin, int64_t end) {
      kernels::gru_cell_backward(g, hp, s, on, H, begin, end, gi, gh, dh);
    });
    return {grad_input, grad_hidden, grad_h, torch::Tensor()};
  }
};

class FusedAdditiveScores : public torch::autograd::Function<FusedAdditiveScores> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q_in, const torch::Tensor& k_in,
                               const torch::Tensor& v_in) {
    auto q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
    const int64_t rows = k.size(0), S = k.size(1), H = k.size(2);
    TORCH_CHECK(q.dim() == 2 && q.size(0) == rows && q.size(1) == H && v.numel() == H,
                "fused additive scores: q ", q.sizes(), ", k ", k.sizes(), ", v ", v.sizes());
    auto scores = torch::empty({rows, S}, k.options());
    auto saved = torch::empty_like(k);
    const auto kernel = kernels::best_recurrent_kernel();
    const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
    float *out = scores.data_ptr<float>(), *t = saved.data_ptr<float>();
    at::parallel_for(0, rows, kScoreGrain, [&](int64_t begin, int64_t end) {
      kernels::additive_scores_forward(qp, kp, vp, S, H, begin, end, out, t, kernel);
    });
    ctx->save_for_backward({v, saved});
    ctx->saved_data["v_sizes"] = v_in.sizes().vec();
    return scores;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& v = saved[0];
    const torch::Tensor& tanh_values = saved[1];
    auto grad_scores = grad_outputs[0].contiguous();
    const int64_t rows = tanh_values.size(0), S = tanh_values.size(1), H = tanh_values.size(2);
    auto grad_k = torch::empty_like(tanh_values);
    auto grad_q = torch::empty({rows, H}, tanh_values.options());
    const float *g = grad_scores.data_ptr<float>(), *vp = v.data_ptr<float>(), *t = tanh_values.data_ptr<float>();
    float *dk = grad_k.data_ptr<float>(), *dq = grad_q.data_ptr<float>();
    at::parallel_for(0, rows, kScoreGrain, [&](int64_t begin, int64_t end) {
      kernels::additive_scores_backward(g, vp, t, S, H, begin, end, dk, dq);
    });
    auto grad_v = torch::mv(tanh_values.view({rows * S, H}).t(), grad_scores.view({rows * S}));
    return {grad_q, grad_k, grad_v.view(ctx->saved_data["v_sizes"].toIntVector())};
  }
};

}  // namespace

bool fused_recurrence_applies(const torch::Tensor& like) {
  return kernels::fused_training_kernels_enabled() && torch::GradMode::is_enabled() && like.device().is_cpu() &&
         like.scalar_type() == torch::kFloat;
}

torch::Tensor fused_gru_cell(const torch::Tensor& input_gates, const torch::Tensor& hidden_gates,
                             const torch::Tensor& h, const torch::Tensor& active) {
  // An autograd function's inputs must all be defined tensors: no flags is an empty one.
  return FusedGruCell::apply(input_gates, hidden_gates, h,
                             active.defined() ? active : torch::empty({0}, torch::TensorOptions().dtype(torch::kUInt8)));
}

torch::Tensor fused_additive_scores(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  return FusedAdditiveScores::apply(q, k, v);
}

}  // namespace nmt::models
