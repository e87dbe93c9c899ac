CREATE TABLE "Employee" (
    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "_version" bigint NOT NULL DEFAULT 1,
    "name" text COLLATE "C" NOT NULL,
    "age" smallint NOT NULL,
    "position" text COLLATE "C",
    "department" text COLLATE "C" NOT NULL,
    "job" text COLLATE "C" NOT NULL
);

CREATE TABLE "Company" (
    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "_version" bigint NOT NULL DEFAULT 1,
    "name" text COLLATE "C" NOT NULL
);

CREATE TABLE "Shop" (
    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "_version" bigint NOT NULL DEFAULT 1,
    "name" text COLLATE "C" NOT NULL,
    "owner" bigint
);

CREATE TABLE "Product" (
    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "_version" bigint NOT NULL DEFAULT 1,
    "id" integer NOT NULL UNIQUE,
    "name" text COLLATE "C" NOT NULL,
    "price" numeric NOT NULL
);

CREATE TABLE "Car" (
    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "_version" bigint NOT NULL DEFAULT 1,
    "name" text COLLATE "C" NOT NULL,
    "kind" text COLLATE "C" NOT NULL,
    "doors" integer NOT NULL,
    "mileage" bigint NOT NULL,
    "seats" smallint NOT NULL,
    "weight" real NOT NULL,
    "power" double precision NOT NULL,
    "registered" boolean NOT NULL,
    "price" numeric NOT NULL,
    "builtAt" timestamptz NOT NULL,
    "vin" uuid NOT NULL,
    "photo" bytea,
    "nickname" text COLLATE "C"
);

CREATE TABLE "Author" (
    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "_version" bigint NOT NULL DEFAULT 1,
    "id" text COLLATE "C" NOT NULL UNIQUE,
    "name" text COLLATE "C" NOT NULL
);

CREATE TABLE "Article" (
    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "_version" bigint NOT NULL DEFAULT 1,
    "id" bigint NOT NULL UNIQUE,
    "title" text COLLATE "C" NOT NULL,
    "text" text COLLATE "C" NOT NULL
);

CREATE TABLE "Category" (
    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "_version" bigint NOT NULL DEFAULT 1,
    "id" uuid NOT NULL UNIQUE,
    "name" text COLLATE "C" NOT NULL
);

CREATE TABLE "Company_employees" (
    "owner" bigint NOT NULL REFERENCES "Company" ("_pk") ON DELETE CASCADE,
    "member" bigint NOT NULL REFERENCES "Employee" ("_pk") ON DELETE CASCADE,
    "position" integer NOT NULL,
    PRIMARY KEY ("member", "owner"),
    UNIQUE ("member") DEFERRABLE INITIALLY DEFERRED,
    UNIQUE ("owner", "position") DEFERRABLE INITIALLY DEFERRED
);

CREATE TABLE "Shop_products" (
    "owner" bigint NOT NULL REFERENCES "Shop" ("_pk") ON DELETE CASCADE,
    "member" bigint NOT NULL REFERENCES "Product" ("_pk") ON DELETE CASCADE,
    PRIMARY KEY ("owner", "member")
);

CREATE TABLE "Author_articles" (
    "owner" bigint NOT NULL REFERENCES "Author" ("_pk") ON DELETE CASCADE,
    "member" bigint NOT NULL REFERENCES "Article" ("_pk") ON DELETE CASCADE,
    PRIMARY KEY ("owner", "member"),
    UNIQUE ("member") DEFERRABLE INITIALLY DEFERRED
);

CREATE TABLE "Article_categories" (
    "owner" bigint NOT NULL REFERENCES "Article" ("_pk") ON DELETE CASCADE,
    "member" bigint NOT NULL REFERENCES "Category" ("_pk") ON DELETE CASCADE,
    "position" integer NOT NULL,
    PRIMARY KEY ("member", "owner"),
    UNIQUE ("owner", "position") DEFERRABLE INITIALLY DEFERRED
);

ALTER TABLE "Shop" ADD FOREIGN KEY ("owner") REFERENCES "Employee" ("_pk") ON DELETE SET NULL;

CREATE INDEX ON "Shop" ("owner");

CREATE INDEX ON "Shop_products" ("member");
