from xling.finetune.grid import grid_id, grid_points, hp_id, parse_hp_id


def test_ids_are_readable_and_round_trip():
    assert grid_id({"batch_size": 16, "lr": 5e-05}) == "bs16_lr5e-05"
    points = grid_points(
        "xnli", {"batch_size": [4, 8], "encoder_lr": [1.25e-6], "classifier_lr": [5e-6]}
    )
    assert [hp_id(p) for p in points] == ["bs4_elr1.25e-06_clr5e-06", "bs8_elr1.25e-06_clr5e-06"]
    assert parse_hp_id("bs4_elr1.25e-06_clr5e-06") == points[0]


def test_yaml_string_numbers_are_accepted():
    # YAML 1.1 reads 2e-5 (no dot) as a string; the paper's grid values are written that way.
    assert grid_points("ner", {"batch_size": [16], "lr": ["2e-5"]}) == [
        {"batch_size": 16, "lr": 2e-05}
    ]
