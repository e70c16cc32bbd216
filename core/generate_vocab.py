"""The fake company behind ``changeprov generate``: its people, teams, domains, table and column names,
descriptions, tags, tiers, glossary terms and DataHub platforms, types and client properties.

Plain constants, no code: the generator (``changeprov.generate``) and its OpenMetadata and DataHub event
builders (``changeprov.generate_openmetadata``, ``changeprov.generate_datahub``) draw from them. They are
kept apart from the code so that the story's vocabulary can be read, and changed, in one place; changing
any value changes the generated output for every seed.
"""

FIRST = ("alice", "bob", "carol", "david", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
         "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yusuf", "zoe",
         "amara", "bruno", "chen", "dmitri", "elena", "farah", "goran", "hana", "ines", "jonas", "kenji",
         "lena", "marco", "nadia", "oscar", "priya", "quinn", "rosa", "sven", "tariq", "uma", "vera")
LAST = ("wong", "martinez", "chen", "kim", "smith", "mueller", "rossi", "tanaka", "silva", "novak",
        "patel", "garcia", "dubois", "larsen", "okafor", "ivanova", "nguyen", "cohen", "haddad", "kowalski")
TEAMS = ("DataPlatform", "Finance", "Marketing", "Sales", "Operations", "Growth", "Risk", "Logistics",
         "CustomerSuccess", "Security", "Product", "Research")
DOMAINS = ("Sales", "Finance", "Marketing", "Operations", "Platform")
NOUNS = ("orders", "customers", "payments", "invoices", "shipments", "products", "sessions", "clicks",
         "refunds", "subscriptions", "inventory", "accounts", "campaigns", "tickets", "returns", "events",
         "carts", "reviews", "suppliers", "stores")
SUFFIXES = ("daily", "raw", "stg", "agg", "hist", "snapshot", "v2", "latest", "by_region", "weekly", "core")
TERMS = ("Revenue", "NetRevenue", "GrossMargin", "Churn", "CustomerLifetimeValue", "ActiveUser",
         "Conversion", "Basket", "Refund", "Chargeback", "Cohort", "Retention", "Invoice", "Shipment")
# (name, dataType, display, extra, pii)
COLUMNS = (
    ("id", "BIGINT", "bigint", {}, None),
    ("customer_id", "BIGINT", "bigint", {}, None),
    ("email", "VARCHAR", "varchar(255)", {"dataLength": 255}, "PII.Sensitive"),
    ("full_name", "VARCHAR", "varchar(200)", {"dataLength": 200}, "PII.Sensitive"),
    ("phone", "VARCHAR", "varchar(32)", {"dataLength": 32}, "PII.Sensitive"),
    ("birth_date", "DATE", "date", {}, "PII.Sensitive"),
    ("zip_code", "VARCHAR", "varchar(16)", {"dataLength": 16}, "PII.NonSensitive"),
    ("country", "VARCHAR", "varchar(2)", {"dataLength": 2}, "PII.NonSensitive"),
    ("amount", "DECIMAL", "decimal(12,2)", {"precision": 12, "scale": 2}, None),
    ("status", "VARCHAR", "varchar(32)", {"dataLength": 32}, None),
    ("quantity", "INT", "int", {}, None),
    ("created_at", "TIMESTAMP", "timestamp", {}, None),
    ("updated_at", "TIMESTAMP", "timestamp", {}, None),
    ("payload", "JSON", "json", {}, None),
    ("channel", "VARCHAR", "varchar(64)", {"dataLength": 64}, None),
    ("discount", "DECIMAL", "decimal(10,2)", {"precision": 10, "scale": 2}, None),
)
DB_SERVICES = (("mysql_prod", "Mysql", ("ecommerce", "crm")), ("postgres_prod", "Postgres", ("shop", "billing")),
               ("snowflake_prod", "Snowflake", ("analytics", "raw")), ("bigquery_prod", "BigQuery", ("marketing",)))
SCHEMAS = ("sales", "public", "staging", "marts", "core", "finance")
DESCRIPTIONS = (
    "One row per {n}, loaded nightly from the operational store.",
    "Deduplicated {n} with late-arriving updates merged; source of truth for reporting.",
    "Staging copy of {n}; do not query directly, use the mart instead.",
    "Aggregated {n} per calendar day in UTC.",
    "Raw {n} as received from the upstream system, append-only.",
    "{n} enriched with customer and region attributes for the analytics team.",
)
PII_DESC = {
    "PII.Sensitive": ("Sensitive", "PII which if lost, compromised, or disclosed without authorization, could "
                      "result in substantial harm, embarrassment, inconvenience, or unfairness to an individual."),
    "PII.NonSensitive": ("NonSensitive", "PII which is easily accessible from public sources and can include "
                         "zip code, race, gender, and date of birth."),
}
TIERS = (("Tier.Tier1", "Tier1", "**Critical Source of Truth business data assets of an organization**"),
         ("Tier.Tier2", "Tier2", "**Important business datasets for your company (not as critical as Tier 1)**"),
         ("Tier.Tier3", "Tier3", "**Department/group level datasets that are typically non-business and general**"),
         ("Tier.Tier4", "Tier4", "**Datasets that are not important or are used for ad-hoc analysis**"))
OTHER_TAGS = (("PersonalData.Personal", "Personal", "Data that can be used to identify a natural person."),
              ("Quality.Certified", "Certified", "Checked by the data quality team."),
              ("Retention.Short", "Short", "Deleted after 90 days."))
DH_PLATFORMS = ("postgres", "mysql", "snowflake", "hive", "kafka", "s3", "bigquery")
DH_TAGS = ("urn:li:tag:PII", "urn:li:tag:Tier1", "urn:li:tag:Gold", "urn:li:tag:Silver", "urn:li:tag:Legacy",
           "urn:li:tag:Sensitive")
DH_TERMS = ("urn:li:glossaryTerm:Classification.PersonalInformation", "urn:li:glossaryTerm:Classification.Email",
            "urn:li:glossaryTerm:Finance.Revenue", "urn:li:glossaryTerm:Finance.GrossMerchandiseValue",
            "urn:li:glossaryTerm:Finance.NetRevenue", "urn:li:glossaryTerm:Customer.CustomerAccount",
            "urn:li:glossaryTerm:Customer.Churn")
DH_DOMAINS = ("finance", "marketing", "sales", "operations", "platform")
OWNER_TYPES = ("TECHNICAL_OWNER", "BUSINESS_OWNER", "DATA_STEWARD")
DH_TYPES = (("com.linkedin.schema.StringType", ("varchar(64)", "string", "text", "VARCHAR(36)")),
            ("com.linkedin.schema.NumberType", ("numeric(10,2)", "double", "bigint", "NUMBER(18,2)")),
            ("com.linkedin.schema.TimeType", ("timestamp", "TIMESTAMP_TZ")),
            ("com.linkedin.schema.DateType", ("date",)),
            ("com.linkedin.schema.BooleanType", ("boolean",)))
DH_FIELDS = ("order_id", "customer_id", "email", "amount", "discount", "created_at", "status", "country",
             "net_amount", "gross_amount", "signup_date", "is_active", "event_ts", "sku", "region")
STRUCT_PROPS = (("urn:li:structuredProperty:io.acme.retention_days", ("[365.0]", "[90.0]", "[30.0]")),
                ("urn:li:structuredProperty:io.acme.data_tier", ('["GOLD"]', '["SILVER"]', '["BRONZE"]')))
FUNCTIONS = ("SUM", "COUNT", "DATE", "MAX", "IDENTITY", "CONCAT")
SYS_COMMON = {"registryName": "unknownRegistry", "registryVersion": "0.0.0.0-dev"}
PROPS_SDK = {"clientId": "acryl-datahub", "clientVersion": "1.7.0.17"}
PROPS_AIRFLOW = {"clientId": "acryl-datahub-airflow-plugin", "clientVersion": "1.7.0.17"}
PROPS_UI = {"appSource": "ui"}
