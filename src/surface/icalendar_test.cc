#include "surface/icalendar.h"

#include <gtest/gtest.h>

#include "base/strings.h"

namespace bk::surface {
namespace {

engine::Reservation Booking(std::string id, Seconds start, Seconds end) {
  engine::Reservation r;
  r.id = std::move(id);
  r.uid = 1000;
  r.username = "alice";
  r.gpus = {0, 3};
  r.start = start;
  r.end = end;
  r.created_at = start - 600;
  r.updated_at = start - 300;
  return r;
}

// The physical lines, each with its CRLF removed.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find("\r\n", at);
    EXPECT_NE(end, std::string::npos) << "a line without CRLF";
    out.push_back(text.substr(at, end - at));
    at = end + 2;
  }
  return out;
}

TEST(ICalendarTest, OneEventPerReservationInUtcWithStableUids) {
  auto a = Booking("0f3c6a2e-1111-4222-8333-444455556666", 1796000400, 1796004000);
  auto b = Booking("9a8b7c6d-1111-4222-8333-444455556666", 1796007600, 1796011200);
  b.mode = engine::Mode::kExclusive;
  std::string cal = ICalendar({a, b}, {"GPU bookings on gpu-a (alice)", "gpu-a"});
  std::vector<std::string> lines = Lines(cal);
  EXPECT_EQ(lines.front(), "BEGIN:VCALENDAR");
  EXPECT_EQ(lines.back(), "END:VCALENDAR");
  EXPECT_NE(cal.find("\r\nUID:0f3c6a2e-1111-4222-8333-444455556666@gpubk\r\n"), std::string::npos);
  EXPECT_NE(cal.find("\r\nDTSTART:20261130T010000Z\r\n"), std::string::npos);
  EXPECT_NE(cal.find("\r\nDTEND:20261130T020000Z\r\n"), std::string::npos);
  EXPECT_NE(cal.find("SUMMARY:GPUs 0\\,3 exclusive (alice)"), std::string::npos);
  size_t events = 0;
  for (const auto& l : lines) events += l == "BEGIN:VEVENT";
  EXPECT_EQ(events, 2u);
  // The same reservations, the same bytes.
  EXPECT_EQ(cal, ICalendar({a, b}, {"GPU bookings on gpu-a (alice)", "gpu-a"}));
}

TEST(ICalendarTest, ABookingsCalendarKeepsWhatEndsSinceOldestFirst) {
  const Seconds t = 1795910400;
  BookingCalendar cal = BookingsCalendar(
      {Booking("c3", t + 7200, t + 9000), Booking("old", t - 9000, t - 7200), Booking("a1", t, t + 3600)},
      "alice", "gpu-a", t - 3600);
  EXPECT_EQ(cal.events, 2u);
  EXPECT_NE(cal.text.find("X-WR-CALNAME:GPU bookings on gpu-a (alice)"), std::string::npos);
  EXPECT_EQ(cal.text.find("old@gpubk"), std::string::npos);
  EXPECT_LT(cal.text.find("a1@gpubk"), cal.text.find("c3@gpubk"));
}

TEST(ICalendarTest, EditsAndACancellationRaiseTheSequence) {
  auto r = Booking("0f3c6a2e-1111-4222-8333-444455556666", 1796000400, 1796004000);
  r.edit_count = 2;
  EXPECT_NE(ICalendar({r}, {"c", "h"}).find("\r\nSEQUENCE:2\r\nSTATUS:CONFIRMED\r\n"), std::string::npos);
  r.status = engine::Status::kCancelled;
  r.cancellation = engine::Cancellation{
      .at = 1796000000, .kind = engine::CancelKind::kAdministrator, .reason = "maintenance; sorry"};
  std::string cal = ICalendar({r}, {"c", "h"});
  EXPECT_NE(cal.find("\r\nSEQUENCE:3\r\nSTATUS:CANCELLED\r\n"), std::string::npos);
  EXPECT_NE(cal.find("Cancelled (administrator): maintenance\\; sorry"), std::string::npos);
}

TEST(ICalendarTest, TextIsEscapedAndControlCharactersDropped) {
  EXPECT_EQ(IcalText("a,b;c\\d\ne\x01"), "a\\,b\\;c\\\\d\\ne ");
  // Not UTF-8: a stray continuation byte, a truncated sequence, an overlong one.
  EXPECT_EQ(IcalText("\x9f ok \xc3 \xc0\xaf \xe2\x82\xac"), "? ok ? ?? \xe2\x82\xac");
}

TEST(ICalendarTest, LongLinesFoldAt75OctetsWithoutSplittingACharacter) {
  std::string text = "DESCRIPTION:";
  for (int i = 0; i < 60; ++i) text += "é";  // two octets each
  std::string folded = IcalLine(text);
  std::vector<std::string> lines = Lines(folded);
  ASSERT_GT(lines.size(), 1u);
  std::string joined;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), 75u);
    if (i > 0) {
      ASSERT_EQ(lines[i][0], ' ');
      // A continuation never starts inside a character.
      EXPECT_NE(static_cast<unsigned char>(lines[i][1]) & 0xc0, 0x80);
    }
    joined += i == 0 ? lines[i] : lines[i].substr(1);
  }
  EXPECT_EQ(joined, text);
}

}  // namespace
}  // namespace bk::surface
