// Tests of data/text_corpus: FNV-1a's published values (the same ids on every machine and
// process), words lower-cased with bigrams in text order, the max-tokens cut, and class folders
// of text files read into token id slots with their class names; errors name the folder.
#include "data/text_corpus.hpp"

#include "common/errc.hpp"
#include "compute/token_ids.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace actorps;
using namespace actorps::test;

namespace {

uint32_t id(const std::string& token) {
  return static_cast<uint32_t>(fnv1a64(token) & ((1u << token_id_bits) - 1));
}

} // namespace

BOOST_AUTO_TEST_SUITE(text_corpus)

BOOST_AUTO_TEST_CASE(fnv1a_gives_its_published_values) {
  BOOST_TEST(fnv1a64("") == 0xcbf29ce484222325ull);
  BOOST_TEST(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  BOOST_TEST(fnv1a64("foobar") == 0x85944171f73967e8ull);
}

BOOST_AUTO_TEST_CASE(words_are_lower_cased_with_bigrams_in_text_order) {
  text_options o;
  auto ids = text_token_ids("Free MONEY, free!! caf\xc3\xa9 42", o);
  const std::vector<uint32_t> want{id("free"), id("money"), id("free money"), id("free"), id("money free"),
                                   id("caf\xc3\xa9"), id("free caf\xc3\xa9"), id("42"), id("caf\xc3\xa9 42")};
  BOOST_TEST(ids == want, boost::test_tools::per_element());
  o.bigrams = false;
  BOOST_TEST(text_token_ids("a b c", o).size() == 3u);
  o.max_tokens = 2;
  BOOST_TEST((text_token_ids("a b c", o) == std::vector<uint32_t>{id("a"), id("b")}));
  BOOST_TEST(text_token_ids("  ,;  ", o).empty());
}

BOOST_AUTO_TEST_CASE(slots_hold_the_ids_then_empty_slots) {
  std::vector<float> row(4, 7.0f);
  encode_tokens({5, (1u << 30) - 1}, 4, row.data());
  uint32_t got = 0;
  BOOST_TEST(decode_token(row[0], got));
  BOOST_TEST(got == 5u);
  BOOST_TEST(decode_token(row[1], got));
  BOOST_TEST(got == (1u << 30) - 1);
  BOOST_TEST(!decode_token(row[2], got));
  BOOST_TEST(!decode_token(3.0f, got)); // (above 2^30's bits; pixels in [0, 1] look like ids: check_model_reads
  BOOST_TEST(!decode_token(-1.0f, got)); //  keeps images away from embeddings)
  for (float v : row)
    BOOST_TEST(std::isfinite(v));
}

BOOST_AUTO_TEST_CASE(class_folders_of_text_become_token_rows) {
  temp_dir dir;
  run_python(dir, "import os\n"
                  "for split, n in (('train', 4), ('test', 2)):\n"
                  "    for c in ('spam', 'ham'):\n"
                  "        os.makedirs(d + f'{split}/{c}', exist_ok=True)\n"
                  "        for i in range(n):\n"
                  "            open(d + f'{split}/{c}/{i}.txt', 'w').write(f'{c} words number {i}')\n"
                  "open(d + 'train/ham/.hidden', 'w').write('not an example')\n");
  text_options o;
  o.max_tokens = 8;
  auto s = load_text_corpus(dir.file(""), 2, o);
  BOOST_REQUIRE(s);
  BOOST_TEST((s->class_names == std::vector<std::string>{"ham", "spam"}));
  BOOST_TEST(s->token_ids);
  BOOST_TEST(s->train.rows == 6);
  BOOST_TEST(s->validation.rows == 2);
  BOOST_TEST(s->test.rows == 4);
  BOOST_TEST(s->train.cols == 8);
  BOOST_TEST(s->model_input().text() == "1x8x1");
  // each row: "<class> words number <i>": 4 words and 3 bigrams, then an empty slot
  for (int r = 0; r < s->test.rows; ++r) {
    const float* row = s->test.images.data() + static_cast<size_t>(r) * 8;
    uint32_t first = 0, last = 0;
    BOOST_TEST(decode_token(row[0], first));
    BOOST_TEST(decode_token(row[6], last));
    BOOST_TEST(!decode_token(row[7], last));
    const bool spam = s->test.labels[static_cast<size_t>(r)] == 1.0f;
    BOOST_TEST(first == id(spam ? "spam" : "ham"));
  }
}

BOOST_AUTO_TEST_CASE(errors_name_the_folder) {
  temp_dir dir;
  run_python(dir, "import os\nos.makedirs(d + 'train/a')\nopen(d + 'train/a/x.txt', 'w').write('x')\n");
  auto missing = load_text_corpus(dir.file(""), 0, {});
  BOOST_REQUIRE(!missing);
  BOOST_TEST(describe(missing.error()).find(dir.file("test")) != std::string::npos);
  run_python(dir, "import os\nos.makedirs(d + 'test/a')\nos.makedirs(d + 'train/b')\n");
  auto empty = load_text_corpus(dir.file(""), 0, {});
  BOOST_REQUIRE(!empty);
  BOOST_TEST(describe(empty.error()).find("train/b: an empty class folder (no text files)") != std::string::npos);
  text_options none;
  none.max_tokens = 0;
  BOOST_TEST(load_text_corpus(dir.file(""), 0, none).error() == errc::invalid_config);
}

// A fuzzer's damaged copies of a mail (UTF-8 with multi-byte letters; tests/support's
// damaged_copies: broken sequences, NULs, bytes 0x80 and 0xff): each is encoded into a row of
// finite slots, its words' ids first, or refused naming the file; none crashes or throws.
BOOST_AUTO_TEST_CASE(damaged_copies_of_a_text_are_encoded_or_refused_by_name) {
  temp_dir dir;
  const std::string mail = "Subject: Grüße aus Köln\nDear Zoë, the façade costs 12 € — naïve offer!\n";
  text_options o;
  std::vector<float> row(static_cast<size_t>(o.max_tokens));
  size_t with_ids = 0;
  read_damaged(std::vector<uint8_t>(mail.begin(), mail.end()), dir.file("x.txt"), 8, 400,
               [&](const std::string& p) -> caf::expected<bool> {
                 if (auto err = encode_text_file(p, o, row.data()))
                   return err;
                 uint32_t id = 0;
                 with_ids += decode_token(row[0], id) ? 1 : 0;
                 BOOST_TEST(std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); }));
                 return true;
               });
  BOOST_TEST(with_ids > 300u); // (only a copy cut to nothing has no word)
}

BOOST_AUTO_TEST_SUITE_END()
