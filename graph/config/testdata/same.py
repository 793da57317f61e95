# The config of same.toml and same.json, written as PyTorch-BigGraph writes
# its configs: a module whose get_torchbiggraph_config() returns the dict.

import os


def get_torchbiggraph_config():
    entities = {
        "node": {"num_partitions": 4},
        "label": {"num_partitions": 1, "dimension": 10},
    }
    relations = [
        dict(name="follows", lhs="node", rhs="node", operator="translation"),
        dict(name="has", lhs="node", rhs="label", weight=0.25, all_negs=True),
    ]
    config = dict(
        entity_path="ent",
        edge_paths=[os.path.join("e%d" % i) for i in range(2)],
        checkpoint_path="ckpt",
        num_epochs=3,
        workers=2,
        batch_size=500,
        eval_fraction=0.1,
        bucket_order="outside_in",
        seed=42,
        dimension=100,
        max_norm=1.5,
        entities=entities,
        relations=relations,
    )
    print("building the config")  # goes to stderr, not into the JSON
    return config
