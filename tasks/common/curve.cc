#include "tasks/common/curve.h"

namespace ts::tasks {
namespace {

template <typename T>
Json array_of(const google::protobuf::RepeatedField<T>& values) {
  Json a = Json::array();
  for (const T v : values) a.push_back(v);
  return a;
}

}  // namespace

Curve::Curve(CurvePoints* points, int max_points) : points_(points), max_points_(max_points) {
  if (points_->stride() < 1) points_->set_stride(1);  // a new run's curve
}

void Curve::add(int64_t step, double seconds, double value) {
  if (!kept(step)) return;
  points_->add_steps(step);
  points_->add_seconds(seconds);
  points_->add_values(value);
  if (points_->steps_size() > max_points_) thin();
}

// Doubles the stride and keeps the points on it, in place.
void Curve::thin() {
  points_->set_stride(points_->stride() * 2);
  int kept_points = 0;
  for (int i = 0; i < points_->steps_size(); ++i) {
    if (!kept(points_->steps(i))) continue;
    points_->set_steps(kept_points, points_->steps(i));
    points_->set_seconds(kept_points, points_->seconds(i));
    points_->set_values(kept_points, points_->values(i));
    ++kept_points;
  }
  points_->mutable_steps()->Truncate(kept_points);
  points_->mutable_seconds()->Truncate(kept_points);
  points_->mutable_values()->Truncate(kept_points);
}

Json Curve::to_json() const {
  Json j = Json::object();
  j["step"] = array_of(points_->steps());
  j["seconds"] = array_of(points_->seconds());
  j["value"] = array_of(points_->values());
  return j;
}

}  // namespace ts::tasks
